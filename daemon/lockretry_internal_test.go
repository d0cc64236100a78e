package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/quirehq/quire/internal/flock"
)

// TestTryLockAwhile: a lock released while it is tried again (as one a
// forked child held for a moment) is taken; one held throughout is
// reported held after every try.
func TestTryLockAwhile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	holder := open()
	if held, err := flock.TryLock(holder); held || err != nil {
		t.Fatalf("first lock: held %v, err %v", held, err)
	}
	pauses := 0
	held, err := tryLockAwhile(open(), func(time.Duration) { pauses++ })
	if !held || err != nil || pauses != lockRetries {
		t.Fatalf("held throughout: held %v, err %v after %d pauses; want held after %d", held, err, pauses, lockRetries)
	}
	held, err = tryLockAwhile(open(), func(time.Duration) { holder.Close() })
	if held || err != nil {
		t.Fatalf("released after the first try: held %v, err %v; want taken", held, err)
	}
}
