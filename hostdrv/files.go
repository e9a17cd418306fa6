package hostdrv

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Files is sysfs / configfs / debugfs access under one root. Names are
// slash-separated and relative to the root ("sys/class/net/...").
type Files interface {
	fs.ReadLinkFS
	// WriteFile writes data to an existing file (control files are never
	// created: a missing one is an error, as on sysfs).
	WriteFile(name string, data []byte) error
	// Mkdir creates one directory (configfs: rdma_cm/<ibdev>).
	Mkdir(name string) error
}

// DirFiles is Files on the real file system under Root ("/" on a host; a
// prepared temp tree in tests).
type DirFiles struct {
	fs.ReadLinkFS
	Root string
}

// NewDirFiles returns Files rooted at root.
func NewDirFiles(root string) *DirFiles {
	return &DirFiles{ReadLinkFS: os.DirFS(root).(fs.ReadLinkFS), Root: root}
}

// WriteFile implements Files. CLI twin: `echo VALUE > /ROOT/NAME`.
// Like reads through os.DirFS, a name that is not a valid fs path (one that
// climbs out of Root) is refused.
func (d *DirFiles) WriteFile(name string, data []byte) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: "write", Path: name, Err: fs.ErrInvalid}
	}
	f, err := os.OpenFile(filepath.Join(d.Root, filepath.FromSlash(name)), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Mkdir implements Files. CLI twin: `mkdir /ROOT/NAME`.
func (d *DirFiles) Mkdir(name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrInvalid}
	}
	return os.Mkdir(filepath.Join(d.Root, filepath.FromSlash(name)), 0o755)
}
