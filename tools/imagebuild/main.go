// Command imagebuild assembles the fabricctl container image from release
// binaries that are already built, without a Docker daemon: one layer on an
// empty base ("FROM scratch"), one image per platform, and an OCI image index
// over them. It writes an OCI image layout (and the same layout as a tar,
// which `podman load` and `skopeo copy oci-archive:` read), a `docker load`
// tarball per platform, and, with --push, pushes the index to a registry.
//
// The output depends only on the inputs: every timestamp is
// SOURCE_DATE_EPOCH, every file is owned by root with a fixed mode, and the
// layer is compressed by Go's gzip at a fixed level, so two builds of the same
// binaries give the same digests.
//
// It lives in a module of its own so that go-containerregistry stays out of
// fabricctl's go.mod. scripts/build-release.sh runs it.
//
//	go run . --binary linux/amd64=../../dist/fabricctl_linux_amd64 \
//	         --binary linux/arm64=../../dist/fabricctl_linux_arm64 \
//	         --version v1.2.3 --revision "$(git rev-parse HEAD)" \
//	         --out ../../dist/image [--push ghcr.io/fabricctl/fabricctl:v1.2.3]
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// What goes into the image.
const (
	// BinaryPath is where the binary sits in the image and the entrypoint.
	BinaryPath = "/usr/local/bin/fabricctl"
	// User is the default user: non-root (distroless "nonroot", ko's default).
	// The host agent (examples/k8s) runs privileged and sets runAsUser: 0
	// itself, because CAP_NET_ADMIN for dcbnl/rtnetlink and the writes to
	// sysfs/configfs need root in the host's user namespace.
	User = "65532:65532"
	// DefaultRepository is where the release workflow pushes the image.
	DefaultRepository = "ghcr.io/fabricctl/fabricctl"
	// DefaultSource is the repository the OCI source label names.
	DefaultSource = "https://github.com/fabricctl/fabricctl"
)

// Options say what to build.
type Options struct {
	Binaries   map[string]string // "linux/amd64" -> path of the binary
	Version    string            // release tag, e.g. v1.2.3
	Revision   string            // the git commit the binaries were built from
	Source     string            // org.opencontainers.image.source
	Repository string            // image repository the tarballs are tagged in
	Epoch      time.Time         // SOURCE_DATE_EPOCH: every timestamp in the image
}

// Result is what Build made.
type Result struct {
	Index  v1.ImageIndex
	Images map[string]v1.Image // platform -> image
}

// Build makes one image per platform and the index over them. It only
// reads the binaries; it writes nothing.
func Build(o Options) (*Result, error) {
	if len(o.Binaries) == 0 {
		return nil, errors.New("no --binary given")
	}
	if o.Version == "" || o.Revision == "" {
		return nil, errors.New("--version and --revision are required (they become the OCI labels)")
	}
	if o.Source == "" {
		o.Source = DefaultSource
	}
	platforms := make([]string, 0, len(o.Binaries))
	for p := range o.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms) // the index lists platforms in a fixed order
	labels := map[string]string{
		"org.opencontainers.image.source":      o.Source,
		"org.opencontainers.image.url":         o.Source,
		"org.opencontainers.image.revision":    o.Revision,
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.created":     o.Epoch.UTC().Format(time.RFC3339),
		"org.opencontainers.image.title":       "fabricctl",
		"org.opencontainers.image.description": "Makes RoCEv2 fabrics lossless and proves it",
		// The repository's LICENSE; the third-party YANG modules built into
		// the binary keep theirs (THIRD_PARTY.md, `fabricctl version`).
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	res := &Result{Images: map[string]v1.Image{}}
	var adds []mutate.IndexAddendum
	for _, p := range platforms {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return nil, fmt.Errorf("--binary %s: %w", p, err)
		}
		if plat.OS != "linux" {
			return nil, fmt.Errorf("--binary %s: only linux images are built", p)
		}
		bin, err := os.ReadFile(o.Binaries[p])
		if err != nil {
			return nil, fmt.Errorf("--binary %s: %w", p, err)
		}
		img, err := buildImage(bin, plat, labels, o.Epoch)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		res.Images[p] = img
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: plat, Annotations: labels},
		})
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, adds...)
	res.Index = mutate.Annotations(idx, labels).(v1.ImageIndex)
	return res, nil
}

func buildImage(bin []byte, plat *v1.Platform, labels map[string]string, epoch time.Time) (v1.Image, error) {
	layerTar, err := rootfs(bin, epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "fabricctl tools/imagebuild: " + BinaryPath + ", /etc/passwd, /etc/group, /etc/nsswitch.conf, /tmp",
			Comment:   "static fabricctl binary on an empty base",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture = plat.Architecture
	cf.Variant = plat.Variant
	cf.OS = plat.OS
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: []string{BinaryPath},
		User:       User,
		WorkingDir: "/",
		Env:        []string{"PATH=/usr/local/bin"},
		Labels:     labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// rootfs is the one layer: the binary and the few files a static Go program
// wants. There is no shell, no libc and no CA bundle: fabricctl trusts the
// switches' CA named in the intent (tls.ca), and SSL_CERT_FILE works for a
// bundle mounted into the container.
func rootfs(bin []byte, epoch time.Time) ([]byte, error) {
	type entry struct {
		name     string
		mode     int64
		uid, gid int
		body     []byte // nil: directory
	}
	entries := []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/nsswitch.conf", mode: 0o644, body: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, body: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: 65532, gid: 65532},
		{name: "root/", mode: 0o700},
		{name: "tmp/", mode: 0o1777},
		{name: "usr/", mode: 0o755},
		{name: "usr/local/", mode: 0o755},
		{name: "usr/local/bin/", mode: 0o755},
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, body: bin},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid,
			ModTime: epoch, Format: tar.FormatPAX,
		}
		if e.body == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write puts the result under dir:
//
//	dir/oci/                          OCI image layout; index.json names the index
//	dir/fabricctl_oci.tar             the same layout as one tar (oci-archive)
//	dir/fabricctl_image_linux_<arch>.tar  docker-archive per platform, tagged
//	                                  <repository>:<version>, for docker/podman load
func Write(res *Result, dir, repository, version string) error {
	if repository == "" {
		repository = DefaultRepository
	}
	tag, err := name.NewTag(repository + ":" + version)
	if err != nil {
		return fmt.Errorf("image tag: %w", err)
	}
	ociDir := filepath.Join(dir, "oci")
	if err := os.RemoveAll(ociDir); err != nil {
		return err
	}
	p, err := layout.Write(ociDir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(res.Index, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": version,
	})); err != nil {
		return err
	}
	if err := tarDir(ociDir, filepath.Join(dir, "fabricctl_oci.tar")); err != nil {
		return err
	}
	for plat, img := range res.Images {
		arch := strings.ReplaceAll(strings.TrimPrefix(plat, "linux/"), "/", "")
		out := filepath.Join(dir, "fabricctl_image_linux_"+arch+".tar")
		if err := tarball.WriteToFile(out, tag, img); err != nil {
			return err
		}
	}
	return nil
}

// tarDir writes dir as a tar with sorted names, root owner and zero times,
// so the archive is as reproducible as the layout in it.
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if d.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err = tw.Write(body)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Push pushes the index to every reference (the first one carries the
// blobs, the rest are tags of the same digest). Credentials come from the
// Docker config (docker/login-action writes it).
func Push(idx v1.ImageIndex, refs []string) error {
	for _, r := range refs {
		ref, err := name.ParseReference(r)
		if err != nil {
			return fmt.Errorf("--push %s: %w", r, err)
		}
		if err := remote.WriteIndex(ref, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", r, err)
		}
	}
	return nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func epochFromEnv() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

func run(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	var bins, push multiFlag
	fl.Var(&bins, "binary", "os/arch=path of a static fabricctl binary (repeat per platform)")
	fl.Var(&push, "push", "push the index to this reference (repeatable)")
	version := fl.String("version", "", "release version (OCI version label, tarball tag)")
	revision := fl.String("revision", "", "git commit of the binaries (OCI revision label)")
	source := fl.String("source", DefaultSource, "source repository URL (OCI source label)")
	repo := fl.String("repository", DefaultRepository, "repository the docker-archive tarballs are tagged in")
	out := fl.String("out", "", "directory for the OCI layout and the tarballs")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fl.Arg(0))
	}
	epoch, err := epochFromEnv()
	if err != nil {
		return err
	}
	o := Options{Binaries: map[string]string{}, Version: *version, Revision: *revision,
		Source: *source, Repository: *repo, Epoch: epoch}
	for _, b := range bins {
		plat, path, ok := strings.Cut(b, "=")
		if !ok || plat == "" || path == "" {
			return fmt.Errorf("--binary %q: want os/arch=path", b)
		}
		if _, dup := o.Binaries[plat]; dup {
			return fmt.Errorf("--binary %s given twice", plat)
		}
		o.Binaries[plat] = path
	}
	if *out == "" && len(push) == 0 {
		return errors.New("nothing to do: give --out and/or --push")
	}
	res, err := Build(o)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		if err := Write(res, *out, *repo, *version); err != nil {
			return err
		}
	}
	if err := Push(res.Index, push); err != nil {
		return err
	}
	d, err := res.Index.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", d)
	return err
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}
