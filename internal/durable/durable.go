// Package durable holds what makes a file written by rename survive a power
// loss.
package durable

import "os"

// SyncDir makes the entries of dir (a file renamed into it) durable:
// fsync(2) of a file "does not necessarily ensure that the entry in the
// directory containing the file has also reached disk. For that an
// explicit fsync() on a file descriptor for the directory is also needed"
// (Linux fsync(2), NOTES; POSIX leaves it to the implementation). Without
// it a power loss right after a rename can leave the data on disk under no
// name.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}
