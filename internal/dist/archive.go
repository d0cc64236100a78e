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
// name or time in its header). The default compression level: the best
// one costs three times the CPU for archives 0.7 % smaller.

// writeTarGz writes files as a gzip-compressed tar archive.
func writeTarGz(w io.Writer, files []file, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
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
		return flate.NewWriter(out, flate.DefaultCompression)
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
// same package, reproducible. The compressed data is copied as vsce
// wrote it (its zlib output is a function of the input alone).
func rezip(src, dst string, mtime time.Time) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	defer zr.Close()
	entries := slices.Clone(zr.File)
	slices.SortFunc(entries, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	return writeFile(dst, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for _, zf := range entries {
			if zf.FileInfo().IsDir() {
				continue
			}
			if err := copyRaw(zw, zf, mtime); err != nil {
				return fmt.Errorf("%s: %w", zf.Name, err)
			}
		}
		return zw.Close()
	})
}

func copyRaw(zw *zip.Writer, zf *zip.File, mtime time.Time) error {
	hdr := &zip.FileHeader{
		Name: zf.Name, Method: zf.Method,
		CRC32: zf.CRC32, CompressedSize64: zf.CompressedSize64, UncompressedSize64: zf.UncompressedSize64,
	}
	// CreateRaw, unlike CreateHeader, writes only the MS-DOS time fields.
	hdr.ModifiedDate, hdr.ModifiedTime = msDOSTime(mtime)
	mode := fs.FileMode(0o644)
	if zf.Mode()&0o100 != 0 {
		mode = 0o755
	}
	hdr.SetMode(mode)
	raw, err := zf.OpenRaw()
	if err != nil {
		return err
	}
	fw, err := zw.CreateRaw(hdr)
	if err != nil {
		return err
	}
	_, err = io.Copy(fw, raw)
	return err
}

// msDOSTime is t (UTC) in a zip header's date and time fields (2 s steps).
func msDOSTime(t time.Time) (date, tm uint16) {
	t = t.UTC()
	date = uint16((t.Year()-1980)<<9 | int(t.Month())<<5 | t.Day())
	tm = uint16(t.Hour()<<11 | t.Minute()<<5 | t.Second()/2)
	return date, tm
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
