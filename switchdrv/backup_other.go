//go:build !unix

package switchdrv

import "os"

// writeLines writes lines to f, in order.
func writeLines(f *os.File, lines [][]byte) error {
	for _, l := range lines {
		if _, err := f.Write(l); err != nil {
			return err
		}
	}
	return nil
}
