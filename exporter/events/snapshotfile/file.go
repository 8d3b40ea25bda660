package snapshotfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ReadFile reads and decodes the file; errors are *Error when the result is known.
func ReadFile(path string, lim Limits) (*Snapshot, error) {
	// Stat first: opening a FIFO put at the path would block the start.
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Missing, err}
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > MaxBytes {
		return nil, &Error{TooLarge, fmt.Errorf("%d bytes, more than %d", st.Size(), MaxBytes)}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read into a buffer of the file's size (io.ReadAll would allocate about twice the file).
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxBytes+1)); err != nil {
		return nil, err
	}
	if buf.Len() > MaxBytes {
		return nil, &Error{TooLarge, fmt.Errorf("more than %d bytes", MaxBytes)}
	}
	return Decode(buf.Bytes(), lim)
}

// tmpPrefix begins the names of the temporary files WriteAtomic writes a snapshot to.
func tmpPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// WriteAtomic writes b to path atomically: a temporary file beside it, synced, renamed over it.
func WriteAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = io.Copy(f, bytes.NewReader(b))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// RemoveTemporaries removes the temporary files of writes to path that a process was killed
// during (they are never renamed over the file), so that kills do not fill the volume. It returns
// how many it removed and why any could not be; a directory that cannot be read is left to the
// restore to report.
func RemoveTemporaries(path string) (removed int, err error) {
	dir, prefix := filepath.Dir(path), tmpPrefix(path)
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		return 0, nil
	}
	var errs []error
	for _, d := range entries {
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), prefix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, d.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}
