package workspace

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

func TestNormalizeNewlines(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"no line ending", "no line ending"},
		{"a\nb\n", "a\nb\n"},
		{"a\r\nb\r\n", "a\nb\n"},
		{"\r\n\r\n", "\n\n"},
		{"lone\rCR\r", "lone\rCR\r"},
		{"\r\r\n", "\r\n"},
		{"mixed\r\nand\nlf\r\n", "mixed\nand\nlf\n"},
		{"é\r\nü", "é\nü"},
	} {
		if got := string(NormalizeNewlines([]byte(tc.in))); got != tc.want {
			t.Errorf("NormalizeNewlines(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// The stream gives the same, however the reads are cut.
		for _, r := range []io.Reader{
			NewlineReader(bytes.NewReader([]byte(tc.in))),
			NewlineReader(iotest.OneByteReader(bytes.NewReader([]byte(tc.in)))),
			NewlineReader(iotest.HalfReader(bytes.NewReader([]byte(tc.in)))),
		} {
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tc.want {
				t.Errorf("NewlineReader(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		}
	}
	if err := iotest.TestReader(NewlineReader(bytes.NewReader([]byte("x\r\ny\r\n"))), []byte("x\ny\n")); err != nil {
		t.Error(err)
	}
}
