package switchdrv

// SetSyncDir replaces the directory sync of the backups for a test and
// returns the function that puts the real one back.
func SetSyncDir(f func(dir string) error) (restore func()) {
	old := syncDir
	syncDir = f
	return func() { syncDir = old }
}

// EncodeSnapshot is the backup file's encoder.
var EncodeSnapshot = encodeSnapshot
