package gitsync

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkPush compares a one-file-change push to the endpoint with the
// same push to a plain bare repository over file://, in one run.
func BenchmarkPush(b *testing.B) {
	files := map[string]string{}
	for i := range 200 {
		files[fmt.Sprintf("memory/%03d.md", i)] = randomText(2000)
	}
	_, url, _ := testHost(b, HostOptions{})
	runs := 0
	for _, target := range []struct {
		name string
		url  func() string // a new, empty repository
	}{
		{"endpoint", func() string { return fmt.Sprintf("%s/ws%d.git", url, runs) }},
		{"file", func() string {
			plain := filepath.Join(b.TempDir(), "plain.git")
			git(b, b.TempDir(), "init", "-q", "--bare", plain)
			return "file://" + plain
		}},
	} {
		b.Run(target.name, func(b *testing.B) {
			runs++
			dst := target.url()
			src := newWorkRepo(b, files)
			git(b, src, "push", "-q", dst, "main")
			i := 0
			for b.Loop() {
				b.StopTimer()
				i++
				commitFiles(b, src, map[string]string{"memory/007.md": fmt.Sprintf("change %d\n", i)}, "one file")
				b.StartTimer()
				git(b, src, "push", "-q", dst, "main")
			}
		})
	}
}
