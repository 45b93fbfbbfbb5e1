package rosbridge

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestBridgeToken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "token")
	if err := os.WriteFile(good, []byte("  0123456789abcdefXYZ\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, tc := range []struct {
		file, address string
		want          string // "" none, "gen" generated, else the token
		err           string
	}{
		{"", "127.0.0.1", "", ""},
		{"", "127.0.0.2", "", ""},
		{"", "::1", "", ""},
		{"", "localhost", "", ""},
		{"", "0.0.0.0", "gen", ""},
		{"", "::", "gen", ""},
		{"", "192.168.1.20", "gen", ""},
		{"", "robot.lan", "gen", ""},
		{good, "127.0.0.1", "0123456789abcdefXYZ", ""},
		{good, "0.0.0.0", "0123456789abcdefXYZ", ""},
		{short, "0.0.0.0", "", "want at least 16"},
		{filepath.Join(dir, "missing"), "0.0.0.0", "", "token_file"},
	} {
		tok, gen, err := bridgeToken(tc.file, tc.address)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q %s: err %v, want %q", tc.file, tc.address, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q %s: %v", tc.file, tc.address, err)
		case tc.want == "gen":
			if !gen || !hex32.MatchString(tok) {
				t.Errorf("%q %s: token %q generated %v, want a generated 32-hex token", tc.file, tc.address, tok, gen)
			}
		case tok != tc.want || gen:
			t.Errorf("%q %s: token %q generated %v, want %q", tc.file, tc.address, tok, gen, tc.want)
		}
	}
	a, _, _ := bridgeToken("", "0.0.0.0")
	b, _, _ := bridgeToken("", "0.0.0.0")
	if a == b {
		t.Error("two generated tokens are equal")
	}
}
