package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// sumsFile lists the SHA-256 of every release file, in sha256sum's format
// ("<hex>  <name>"), so `sha256sum -c SHA256SUMS` checks a download.
const sumsFile = "SHA256SUMS"

// releaseFiles lists the files of a release directory but SHA256SUMS,
// sorted.
func releaseFiles(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		if de.Type().IsRegular() && de.Name() != sumsFile {
			names = append(names, de.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

func writeSums(dir string) error {
	names, err := releaseFiles(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, n := range names {
		sum, err := sha256File(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	return os.WriteFile(filepath.Join(dir, sumsFile), []byte(b.String()), 0o644)
}

// checkSums verifies dir's SHA256SUMS: every line's file has that sum and
// every release file has a line.
func checkSums(dir string) error {
	f, err := os.Open(filepath.Join(dir, sumsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" || strings.ContainsAny(name, "/\\") {
			return fmt.Errorf("%s line %d: %q is not \"<sha256>  <name>\"", sumsFile, line, sc.Text())
		}
		got, err := sha256File(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("%s line %d: %w", sumsFile, line, err)
		}
		if got != sum {
			return fmt.Errorf("%s: %s has SHA-256 %s, %s says %s", dir, name, got, sumsFile, sum)
		}
		listed[name] = true
	}
	if err := sc.Err(); err != nil {
		return err
	}
	names, err := releaseFiles(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if !listed[n] {
			return fmt.Errorf("%s: %s is not in %s", dir, n, sumsFile)
		}
	}
	return nil
}

func sha256File(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
