package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/quirehq/quire/workspace"
)

// MaxSkillBytes bounds a SKILL.md file; a larger one is an error and is
// not read.
const MaxSkillBytes = 1 << 20

var errTooLarge = errors.New("too large")

// readLimited reads an open skill file, refusing one over MaxSkillBytes
// without reading it.
func readLimited(f fs.File) ([]byte, error) {
	size, want := int64(512), int64(-1)
	if info, err := f.Stat(); err == nil {
		if info.Size() > MaxSkillBytes {
			return nil, errTooLarge
		}
		if info.IsDir() {
			return nil, fmt.Errorf("%s is a directory", workspace.SkillFile)
		}
		if info.Mode().IsRegular() {
			size, want = info.Size(), info.Size()
		}
	}
	buf := make([]byte, 0, size)
	for {
		if int64(len(buf)) == want { // the size Stat gave: no read for EOF
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxSkillBytes {
			return nil, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readBufs holds the buffers tier readers read SKILL.md files into (each
// text is copied out into the tier's blocks, see tierReader.text).
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}
