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
	h, url, _ := testHost(b, HostOptions{})
	if _, err := h.Create("ws"); err != nil {
		b.Fatal(err)
	}
	plain := filepath.Join(b.TempDir(), "plain.git")
	git(b, b.TempDir(), "init", "-q", "--bare", plain)
	for _, target := range []struct{ name, url string }{
		{"endpoint", url + "/ws.git"},
		{"file", "file://" + plain},
	} {
		b.Run(target.name, func(b *testing.B) {
			src := newWorkRepo(b, files)
			git(b, src, "push", "-q", target.url, "main")
			i := 0
			for b.Loop() {
				b.StopTimer()
				i++
				commitFiles(b, src, map[string]string{"memory/007.md": fmt.Sprintf("change %d\n", i)}, "one file")
				b.StartTimer()
				git(b, src, "push", "-q", target.url, "main")
			}
		})
	}
}
