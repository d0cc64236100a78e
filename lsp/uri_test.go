package lsp

import "testing"

// TestURIToPath: the forms of a file: URI clients send, on Windows (drive
// letters in either case, a percent-encoded colon, backslashes, shares)
// and on unix, and the URIs that are not on this disk.
func TestURIToPath(t *testing.T) {
	for _, tc := range []struct {
		uri     string
		windows bool
		want    string // "" when not a local file
	}{
		{"file:///C:/Users/ines/ws/SOUL.md", true, `C:\Users\ines\ws\SOUL.md`},
		{"file:///c:/Users/ines/ws/SOUL.md", true, `C:\Users\ines\ws\SOUL.md`},
		{"file:///c%3A/Users/ines/ws/SOUL.md", true, `C:\Users\ines\ws\SOUL.md`},
		{"file:///C%3a/Users/ines/ws/SOUL.md", true, `C:\Users\ines\ws\SOUL.md`},
		{`file:///C:\Users\ines\ws\SOUL.md`, true, `C:\Users\ines\ws\SOUL.md`},
		{"file://localhost/c%3A/Users/ines/ws/SOUL.md", true, `C:\Users\ines\ws\SOUL.md`},
		{"file:///c%3A/Users/In%C3%AAs/my%20ws/skills/pdf/SKILL.md", true, `C:\Users\Inês\my ws\skills\pdf\SKILL.md`},
		{"file:///c%3A/Users/ines/ws/../ws/./SOUL.md", true, `C:\Users\ines\ws\SOUL.md`},
		{"file:///C:/", true, `C:\`},
		{"file:///d%3A", true, `D:\`},
		{"file://server/share/ws/SOUL.md", true, `\\server\share\ws\SOUL.md`},
		{"file://server/", true, ""},
		{"file:///home/ines/ws/SOUL.md", false, "/home/ines/ws/SOUL.md"},
		{"file://localhost/home/ines/ws/SOUL.md", false, "/home/ines/ws/SOUL.md"},
		{"file:///home/ines/my%20ws/SOUL.md", false, "/home/ines/my ws/SOUL.md"},
		{"file:///home/ines/a%5Cb.md", false, `/home/ines/a\b.md`},
		{"file://server/share/ws/SOUL.md", false, ""},
		{"untitled:Untitled-1", true, ""},
		{"untitled:Untitled-1", false, ""},
		{"https://example.com/SOUL.md", false, ""},
		{"file:", false, ""},
	} {
		got, ok := uriToPath(tc.uri, tc.windows)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("uriToPath(%q, windows=%v) = %q, want %q", tc.uri, tc.windows, got, tc.want)
		}
	}
}

// TestPathURIRoundTrip: a path becomes a URI that names it again, on
// Windows and on unix; a Windows URI's drive letter is upper case.
func TestPathURIRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		path    string
		windows bool
		uri     string
	}{
		{`C:\Users\ines\ws\SOUL.md`, true, "file:///C:/Users/ines/ws/SOUL.md"},
		{`c:\Users\ines\ws\SOUL.md`, true, "file:///C:/Users/ines/ws/SOUL.md"},
		{`C:\Users\Inês\my ws\#1.md`, true, "file:///C:/Users/In%C3%AAs/my%20ws/%231.md"},
		{`\\server\share\ws\SOUL.md`, true, "file://server/share/ws/SOUL.md"},
		{"/home/ines/ws/SOUL.md", false, "file:///home/ines/ws/SOUL.md"},
		{"/home/ines/my ws/50%.md", false, "file:///home/ines/my%20ws/50%25.md"},
	} {
		u := pathToURI(tc.path, tc.windows)
		if string(u) != tc.uri {
			t.Errorf("pathToURI(%q, windows=%v) = %q, want %q", tc.path, tc.windows, u, tc.uri)
		}
		back, ok := uriToPath(string(u), tc.windows)
		want := tc.path
		if tc.windows && want[1] == ':' {
			want = "C" + want[1:]
		}
		if !ok || back != want {
			t.Errorf("uriToPath(pathToURI(%q)) = %q, %v; want the path again", tc.path, back, ok)
		}
	}
}
