package main

import (
	"debug/elf"
	"debug/pe"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRelease writes a release directory for two targets the way build
// does, with header-only binaries; mutate changes the files first.
func fakeRelease(t *testing.T, mutate func(name string, files []file) []file) checkOptions {
	t.Helper()
	src, out := t.TempDir(), t.TempDir()
	for n, s := range map[string]string{"README.md": "# Quire\n", "LICENSE": "MIT\n"} {
		if err := os.WriteFile(filepath.Join(src, n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := checkOptions{Dir: out, Src: src, Version: "v1.0.0", VSIX: true,
		Targets: []target{{"linux", "amd64"}, {"windows", "arm64"}}}
	bins := map[target][]byte{o.Targets[0]: elfHeader(t, elf.EM_X86_64, elf.ELFOSABI_NONE), o.Targets[1]: peHeader(t, pe.IMAGE_FILE_MACHINE_ARM64)}
	ext := func(vt string) []file {
		manifest := `<Identity Id="quire"/>`
		if vt != universal {
			manifest = fmt.Sprintf(`<Identity Id="quire" TargetPlatform=%q/>`, vt)
		}
		return []file{{"extension.vsixmanifest", 0o644, []byte(manifest)}, {"extension/package.json", 0o644, []byte("{}")},
			{"extension/dist/extension.js", 0o644, []byte("x")}, {"extension/LICENSE.txt", 0o644, []byte("MIT\n")}}
	}
	write := func(name string, files []file, tgz bool) {
		files = mutate(name, files)
		w := func(w io.Writer) error { return writeZip(w, files, commitTime) }
		if tgz {
			w = func(w io.Writer) error { return writeTarGz(w, files, commitTime) }
		}
		if err := writeFile(filepath.Join(out, name), w); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range o.Targets {
		base := tg.archiveBase(o.Version)
		write(base+tg.archiveExt(), []file{{base + "/" + tg.exe(), 0o755, bins[tg]},
			{base + "/README.md", 0o644, []byte("# Quire\n")}, {base + "/LICENSE", 0o644, []byte("MIT\n")}}, tg.GOOS != "windows")
		write(vsixName(o.Version, tg.vsceTarget()), append(ext(tg.vsceTarget()), file{"extension/bin/" + tg.exe(), 0o755, bins[tg]}), false)
	}
	write(vsixName(o.Version, universal), ext(universal), false)
	if err := writeSums(out); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestCheck(t *testing.T) {
	elfARM := func(t *testing.T) []byte { return elfHeader(t, elf.EM_AARCH64, elf.ELFOSABI_NONE) }
	tests := []struct {
		name   string
		mutate func(t *testing.T, name string, files []file) []file
		want   string // "" : the check passes
	}{
		{"as built", nil, ""},
		{"an arm64 binary in the amd64 archive", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, "linux_amd64.tar.gz") {
				fs[0].Data = elfARM(t)
			}
			return fs
		}, "want machine EM_X86_64"},
		{"the package's binary is not the archive's", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, "linux-x64.vsix") {
				fs[len(fs)-1].Data = append(fs[len(fs)-1].Data, 0)
			}
			return fs
		}, "differs from the binary in the linux/amd64 archive"},
		{"a binary that is not executable", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, ".zip") {
				fs[0].Mode = 0o644
			}
			return fs
		}, "want 0755"},
		{"a package without its binary", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, "win32-arm64.vsix") {
				return fs[:len(fs)-1]
			}
			return fs
		}, "no extension/bin/quire.exe"},
		{"a universal package with a binary", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, "universal.vsix") {
				return append(fs, file{"extension/bin/quire", 0o755, elfARM(t)})
			}
			return fs
		}, "the universal package carries"},
		{"another README", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, ".tar.gz") {
				fs[1].Data = []byte("# Old\n")
			}
			return fs
		}, "want the repository's file"},
		{"an extra file in an archive", func(t *testing.T, name string, fs []file) []file {
			if strings.HasSuffix(name, ".zip") {
				return append(fs, file{"quire_v1.0.0_windows_arm64/extra", 0o644, nil})
			}
			return fs
		}, "entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mutate := func(_ string, fs []file) []file { return fs }
			if tt.mutate != nil {
				mutate = func(name string, fs []file) []file { return tt.mutate(t, name, fs) }
			}
			o := fakeRelease(t, mutate)
			lines, err := check(o)
			if tt.want == "" {
				if err != nil || len(lines) != 5 {
					t.Fatalf("check = %d lines, %v; want 5 and no error", len(lines), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("check error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// What is missing or extra in the directory, and a stale SHA256SUMS.
func TestCheckDirectory(t *testing.T) {
	same := func(_ string, fs []file) []file { return fs }
	o := fakeRelease(t, same)
	os.Remove(filepath.Join(o.Dir, vsixName(o.Version, universal)))
	writeSums(o.Dir)
	if _, err := check(o); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Errorf("a missing package: %v", err)
	}
	o = fakeRelease(t, same)
	os.WriteFile(filepath.Join(o.Dir, "quire_v0.9.0_linux_amd64.tar.gz"), nil, 0o644)
	writeSums(o.Dir)
	if _, err := check(o); err == nil || !strings.Contains(err.Error(), "unexpected file") {
		t.Errorf("a file of another version: %v", err)
	}
	o = fakeRelease(t, same)
	os.WriteFile(filepath.Join(o.Dir, sumsFile), []byte("0000000000000000000000000000000000000000000000000000000000000000  quire-vscode_v1.0.0_universal.vsix\n"), 0o644)
	if _, err := check(o); err == nil {
		t.Error("a wrong SHA256SUMS passes")
	}
}
