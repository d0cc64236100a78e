package main

import (
	"archive/tar"
	"archive/zip"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// file is one entry of an archive.
type file struct {
	Name string // slash-separated, inside the archive
	Mode fs.FileMode
	Data []byte
}

// Every archive is reproducible: entries sorted by name, one fixed
// modification time (the commit's), owner 0:0 with no user or group
// names, fixed modes, and compression with fixed settings (gzip with no
// name or time in its header).

// writeTarGz writes files as a gzip-compressed tar archive.
func writeTarGz(w io.Writer, files []file, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range sorted(files) {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     f.Name,
			Mode:     int64(f.Mode.Perm()),
			Size:     int64(len(f.Data)),
			ModTime:  mtime.UTC().Truncate(time.Second),
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("tar entry %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return fmt.Errorf("tar entry %s: %w", f.Name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes files as a zip archive (deflate).
func writeZip(w io.Writer, files []file, mtime time.Time) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for _, f := range sorted(files) {
		hdr := &zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: mtime.UTC().Truncate(time.Second)}
		hdr.SetMode(f.Mode)
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return fmt.Errorf("zip entry %s: %w", f.Name, err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			return fmt.Errorf("zip entry %s: %w", f.Name, err)
		}
	}
	return zw.Close()
}

func sorted(files []file) []file {
	out := slices.Clone(files)
	slices.SortFunc(out, func(a, b file) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// entry is a file read back from an archive, with what the checks look at.
type entry struct {
	file
	ModTime  time.Time
	UID, GID int
}

// readArchive reads every regular file of a .tar.gz, .zip or .vsix.
func readArchive(name string) ([]entry, error) {
	if strings.HasSuffix(name, ".tar.gz") {
		return readTarGz(name)
	}
	return readZip(name)
}

func readTarGz(name string) ([]entry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tr := tar.NewReader(gz)
	var out []entry
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%s: %s is not a regular file (type %q)", name, hdr.Name, hdr.Typeflag)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, hdr.Name, err)
		}
		out = append(out, entry{file{hdr.Name, fs.FileMode(hdr.Mode).Perm(), data}, hdr.ModTime, hdr.Uid, hdr.Gid})
	}
}

func readZip(name string) ([]entry, error) {
	zr, err := zip.OpenReader(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer zr.Close()
	var out []entry
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, zf.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, zf.Name, err)
		}
		out = append(out, entry{file: file{zf.Name, zf.Mode().Perm(), data}, ModTime: zf.Modified})
	}
	return out, nil
}

// rezip rewrites the zip archive src (a .vsix vsce made, with the time it
// ran as every entry's time and the modes of the checkout's files) as dst
// with the entries sorted, mtime as their time and mode 0755 or 0644: the
// same package, reproducible.
func rezip(src, dst string, mtime time.Time) error {
	entries, err := readZip(src)
	if err != nil {
		return err
	}
	files := make([]file, len(entries))
	for i, e := range entries {
		files[i] = e.file
		files[i].Mode = 0o644
		if e.Mode&0o100 != 0 {
			files[i].Mode = 0o755
		}
	}
	return writeFile(dst, func(w io.Writer) error { return writeZip(w, files, mtime) })
}

// writeFile creates name with what write writes, removing it on failure.
func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// inDir is the path of name inside an archive's top directory.
func inDir(dir, name string) string { return path.Join(dir, name) }
