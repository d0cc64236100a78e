package lsp

import (
	"errors"
	"io"
	"os"
)

// Stdio joins the process's standard input and output into the stream
// Serve reads and writes. Nothing else may write to stdout while it is in
// use: logs go to stderr or a file.
func Stdio() io.ReadWriteCloser { return stdio{} }

type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return errors.Join(os.Stdin.Close(), os.Stdout.Close()) }

// ExitCode is the process exit status for what Serve returned: 0 after
// shutdown and exit, 1 otherwise (as the protocol asks of exit without
// shutdown).
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	return 1
}
