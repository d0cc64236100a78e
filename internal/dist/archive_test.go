package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var (
	commitTime = time.Date(2026, 11, 26, 5, 12, 20, 0, time.UTC)
	someFiles  = []file{
		{"q/quire", 0o755, []byte("\x7fELF binary")},
		{"q/README.md", 0o644, []byte("# Quire\n")},
		{"q/LICENSE", 0o644, []byte("MIT\n")},
	}
)

// Both formats: the same files give the same bytes whatever their order,
// and read back sorted, with their modes, the fixed time and owner 0:0.
func TestArchivesAreReproducible(t *testing.T) {
	for _, tt := range []struct {
		ext   string
		write func(io.Writer, []file, time.Time) error
	}{{".tar.gz", writeTarGz}, {".zip", writeZip}} {
		t.Run(tt.ext, func(t *testing.T) {
			var a, b bytes.Buffer
			if err := tt.write(&a, someFiles, commitTime); err != nil {
				t.Fatal(err)
			}
			reversed := []file{someFiles[2], someFiles[1], someFiles[0]}
			if err := tt.write(&b, reversed, commitTime.Add(300*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatal("the same files in another order give other bytes")
			}
			name := filepath.Join(t.TempDir(), "a"+tt.ext)
			if err := os.WriteFile(name, a.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readArchive(name)
			if err != nil {
				t.Fatal(err)
			}
			want := sorted(someFiles)
			if len(got) != len(want) {
				t.Fatalf("read %d entries, want %d", len(got), len(want))
			}
			for i, e := range got {
				w := want[i]
				if e.Name != w.Name || e.Mode != w.Mode || !bytes.Equal(e.Data, w.Data) || !e.ModTime.Equal(commitTime) || e.UID != 0 || e.GID != 0 {
					t.Errorf("entry %d = %s %v %q %s %d:%d, want %s %v %q %s 0:0", i, e.Name, e.Mode, e.Data, e.ModTime, e.UID, e.GID, w.Name, w.Mode, w.Data, commitTime)
				}
			}
		})
	}
}

// rezip makes one package of two that differ only in time, order and
// the checkout's modes.
func TestRezipNormalises(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, files []file, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := writeFile(p, func(w io.Writer) error { return writeZip(w, files, mtime) }); err != nil {
			t.Fatal(err)
		}
		return p
	}
	groupWritable := []file{{"extension/readme.md", 0o664, []byte("r")}, {"extension/bin/quire", 0o775, []byte("b")}}
	plain := []file{{"extension/bin/quire", 0o755, []byte("b")}, {"extension/readme.md", 0o644, []byte("r")}}
	a, b := write("a.vsix", groupWritable, time.Now()), write("b.vsix", plain, commitTime.Add(time.Hour))
	for _, p := range []string{a, b} {
		if err := rezip(p, p+".out", commitTime); err != nil {
			t.Fatal(err)
		}
	}
	x, _ := os.ReadFile(a + ".out")
	y, _ := os.ReadFile(b + ".out")
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatal("rezip leaves two packages of the same files different")
	}
	got, err := readZip(a + ".out")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range got {
		w := plain[i]
		if e.Name != w.Name || e.Mode != w.Mode || !bytes.Equal(e.Data, w.Data) || !e.ModTime.Equal(commitTime) {
			t.Errorf("entry %d = %s %v %q %s, want %s %v %q %s", i, e.Name, e.Mode, e.Data, e.ModTime, w.Name, w.Mode, w.Data, commitTime)
		}
	}
}

func TestVersionFor(t *testing.T) {
	if got := versionFor("v1.2.0", "1293db58c0ce09f0", commitTime); got != "v1.2.0" {
		t.Errorf("a tagged commit: %q", got)
	}
	if got, want := versionFor("", "1293db58c0ce09f092a7a0db699f2e9585a6357e", commitTime.In(time.FixedZone("CET", 3600))), "v0.0.0-20261126051220-1293db58c0ce"; got != want {
		t.Errorf("an untagged commit: %q, want %q", got, want)
	}
}

func TestSums(t *testing.T) {
	dir := t.TempDir()
	for n, s := range map[string]string{"a.tar.gz": "a", "b.zip": "b"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeSums(dir); err != nil {
		t.Fatal(err)
	}
	sums, _ := os.ReadFile(filepath.Join(dir, sumsFile))
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.zip\n"
	if string(sums) != want {
		t.Fatalf("SHA256SUMS =\n%s\nwant (sha256sum's format)\n%s", sums, want)
	}
	if err := checkSums(dir); err != nil {
		t.Fatalf("checkSums of what writeSums wrote: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "b.zip"), []byte("B"), 0o644)
	if err := checkSums(dir); err == nil {
		t.Error("a changed file passes")
	}
	os.WriteFile(filepath.Join(dir, "b.zip"), []byte("b"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.vsix"), []byte("c"), 0o644)
	if err := checkSums(dir); err == nil {
		t.Error("a file SHA256SUMS does not list passes")
	}
}

func TestSafeOut(t *testing.T) {
	src := t.TempDir()
	for _, out := range []string{src, filepath.Dir(src), "/"} {
		if err := safeOut(src, out); err == nil {
			t.Errorf("safeOut(%s, %s) lets build empty the sources", src, out)
		}
	}
	if err := safeOut(src, filepath.Join(src, "dist")); err != nil {
		t.Errorf("dist inside the sources: %v", err)
	}
}
