package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// checkOptions say what a release directory must hold.
type checkOptions struct {
	Dir     string
	Src     string // the repository: README.md and LICENSE to compare with
	Version string
	Targets []target
	VSIX    bool
}

// check verifies a release directory: SHA256SUMS, then every archive and
// extension package, and that nothing else is there. It returns one line
// per file checked, saying what was found.
func check(o checkOptions) ([]string, error) {
	if err := checkSums(o.Dir); err != nil {
		return nil, err
	}
	want := map[string]func(string) (string, error){}
	bins := map[string][]byte{} // binary of each VS Code platform, from its archive
	for _, t := range o.Targets {
		want[t.archiveBase(o.Version)+t.archiveExt()] = func(p string) (string, error) { return checkArchive(o, t, p, bins) }
		if o.VSIX && t.vsceTarget() != "" {
			want[vsixName(o.Version, t.vsceTarget())] = func(p string) (string, error) { return checkVSIX(t, p, bins[t.vsceTarget()]) }
		}
	}
	if o.VSIX {
		want[vsixName(o.Version, universal)] = func(p string) (string, error) { return checkVSIX(target{}, p, nil) }
	}
	names, err := releaseFiles(o.Dir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if want[n] == nil {
			return nil, fmt.Errorf("%s: unexpected file %s (want %d files for version %s)", o.Dir, n, len(want), o.Version)
		}
	}
	// Archives first: the packages' binaries are compared with theirs.
	slices.SortFunc(names, func(a, b string) int {
		return cmpBool(strings.HasSuffix(a, ".vsix"), strings.HasSuffix(b, ".vsix"), strings.Compare(a, b))
	})
	var lines []string
	for _, n := range names {
		got, err := want[n](filepath.Join(o.Dir, n))
		if err != nil {
			return lines, fmt.Errorf("%s: %w", n, err)
		}
		lines = append(lines, fmt.Sprintf("%s: %s", n, got))
		delete(want, n)
	}
	for n := range want {
		return lines, fmt.Errorf("%s: %s is missing", o.Dir, n)
	}
	return lines, nil
}

func cmpBool(a, b bool, then int) int {
	switch {
	case a == b:
		return then
	case a:
		return 1
	}
	return -1
}

// checkArchive: exactly the binary, README.md and LICENSE in the
// archive's directory, the binary executable and of t's format, README
// and LICENSE those of the repository, one fixed time, owner 0:0.
func checkArchive(o checkOptions, t target, name string, bins map[string][]byte) (string, error) {
	entries, err := readArchive(name)
	if err != nil {
		return "", err
	}
	base := t.archiveBase(o.Version)
	wantNames := []string{inDir(base, "LICENSE"), inDir(base, "README.md"), inDir(base, t.exe())}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	if !slices.Equal(names, wantNames) {
		return "", fmt.Errorf("entries %q, want %q in this order", names, wantNames)
	}
	for _, e := range entries {
		if !e.ModTime.Equal(entries[0].ModTime) || e.UID != 0 || e.GID != 0 {
			return "", fmt.Errorf("%s: time %s owner %d:%d, want the time of every entry and 0:0", e.Name, e.ModTime, e.UID, e.GID)
		}
	}
	for _, e := range entries[:2] {
		src, err := os.ReadFile(filepath.Join(o.Src, filepath.Base(e.Name)))
		if err != nil {
			return "", err
		}
		if !bytes.Equal(src, e.Data) || e.Mode != 0o644 {
			return "", fmt.Errorf("%s: mode %v, %d bytes: want the repository's file, mode 0644", e.Name, e.Mode, len(e.Data))
		}
	}
	bin := entries[2]
	if bin.Mode != 0o755 {
		return "", fmt.Errorf("%s: mode %v, want 0755", bin.Name, bin.Mode)
	}
	got, err := checkBinary(bin.Data, t)
	if err != nil {
		return "", fmt.Errorf("%s: %w", bin.Name, err)
	}
	if t.vsceTarget() != "" {
		bins[t.vsceTarget()] = bin.Data
	}
	return fmt.Sprintf("%s, %d bytes, %s", bin.Name, len(bin.Data), got), nil
}

// checkVSIX: a platform package carries t's binary at extension/bin/ (the
// archive's, byte for byte), executable, and declares its platform; the
// universal package (the zero t) has no binary and no platform.
func checkVSIX(t target, name string, archived []byte) (string, error) {
	entries, err := readArchive(name)
	if err != nil {
		return "", err
	}
	byName := map[string]entry{}
	for _, e := range entries {
		byName[e.Name] = e
	}
	for _, n := range []string{"extension.vsixmanifest", "extension/package.json", "extension/dist/extension.js", "extension/LICENSE.txt"} {
		if _, ok := byName[n]; !ok {
			return "", fmt.Errorf("no %s", n)
		}
	}
	manifest := string(byName["extension.vsixmanifest"].Data)
	if t == (target{}) {
		for _, e := range entries {
			if strings.HasPrefix(e.Name, "extension/"+bundledDir+"/") {
				return "", fmt.Errorf("the universal package carries %s", e.Name)
			}
		}
		if strings.Contains(manifest, "TargetPlatform=") {
			return "", fmt.Errorf("the universal package's manifest names a platform")
		}
		return "universal, no binary", nil
	}
	if !strings.Contains(manifest, fmt.Sprintf("TargetPlatform=%q", t.vsceTarget())) {
		return "", fmt.Errorf("the manifest does not say TargetPlatform=%q", t.vsceTarget())
	}
	binName := "extension/" + bundledDir + "/" + t.exe()
	bin, ok := byName[binName]
	if !ok {
		return "", fmt.Errorf("no %s", binName)
	}
	if bin.Mode != 0o755 {
		return "", fmt.Errorf("%s: mode %v, want 0755 (VS Code keeps the mode when it installs)", binName, bin.Mode)
	}
	got, err := checkBinary(bin.Data, t)
	if err != nil {
		return "", fmt.Errorf("%s: %w", binName, err)
	}
	if archived != nil && !bytes.Equal(archived, bin.Data) {
		return "", fmt.Errorf("%s differs from the binary in the %s archive", binName, t)
	}
	return fmt.Sprintf("%s for %s, %d bytes, %s", binName, t.vsceTarget(), len(bin.Data), got), nil
}
