//go:build windows

package agent_test

import "errors"

// makeFIFO fails: Windows file systems have no FIFOs.
func makeFIFO(string) error { return errors.ErrUnsupported }
