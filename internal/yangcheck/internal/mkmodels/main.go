// Command mkmodels writes models.tar.gz, the compressed copy of the YANG
// modules in models/ that package yangcheck embeds. It is run by go generate
// in internal/yangcheck:
//
//	go generate ./internal/yangcheck
//
// The archive is deterministic: files in byte order of their paths, no
// timestamps, owners or modes beyond 0644, and a gzip header without a name
// or time. TestEmbeddedMatchesFolder fails when it and the folder differ.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	src, dst := "models", "models.tar.gz"
	if len(os.Args) == 3 {
		src, dst = os.Args[1], os.Args[2]
	}
	if err := run(src, dst); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodels:", err)
		os.Exit(1)
	}
}

func run(src, dst string) error {
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		h := &tar.Header{Name: f, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(dst, buf.Bytes(), 0o644)
}
