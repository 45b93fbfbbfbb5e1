package iobuf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateOpen_RefuseUnsafeFiles (issue 25, finding 4): root-run Velma
// processes followed a local user's symbolic link in /dev/shm and
// overwrote its target, and accepted a world-writable buffer the attacker
// owned. A symbolic link, a world-writable file, a foreign file, a hard
// link and a directory in place of a buffer are refused by Create and Open
// with ErrUnsafeFile and the reason, and left as they were; a group-shared
// file of ours is used.
func TestCreateOpen_RefuseUnsafeFiles(t *testing.T) {
	victimContent := []byte("root's file, not a buffer\n")
	cases := []struct {
		name   string
		make   func(t *testing.T, path string) (check func(t *testing.T))
		reason string // "" accepted
	}{
		{"symlink to a file", func(t *testing.T, path string) func(*testing.T) {
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, victimContent, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, path); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if got, err := os.ReadFile(victim); err != nil || !bytes.Equal(got, victimContent) {
					t.Errorf("the link's target changed: %.40q..., %v", got, err)
				}
			}
		}, "symbolic link"},
		{"dangling symlink", func(t *testing.T, path string) func(*testing.T) {
			target := filepath.Join(t.TempDir(), "created-by-us")
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if _, err := os.Lstat(target); err == nil {
					t.Error("the link's target was created")
				}
			}
		}, "symbolic link"},
		{"world-writable", func(t *testing.T, path string) func(*testing.T) {
			return ownBuffer(t, path, 0o666)
		}, "writable by every user"},
		{"hard link", func(t *testing.T, path string) func(*testing.T) {
			victim := filepath.Join(filepath.Dir(path), "victim")
			if err := os.WriteFile(victim, victimContent, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(victim, path); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if got, _ := os.ReadFile(victim); !bytes.Equal(got, victimContent) {
					t.Errorf("the linked file changed: %.40q...", got)
				}
			}
		}, "hard links"},
		{"directory", func(t *testing.T, path string) func(*testing.T) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			return func(*testing.T) {}
		}, "is a directory"},
		{"foreign owner", func(t *testing.T, path string) func(*testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			check := ownBuffer(t, path, 0o600)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return check
		}, "owned by uid 65534"},
		{"group-shared", func(t *testing.T, path string) func(*testing.T) {
			ownBuffer(t, path, 0o660)
			return func(*testing.T) {}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "buf")
			check := c.make(t, path)
			w, werr := Create[rec](path, 4)
			if w != nil {
				defer w.Close()
			}
			r, rerr := Open[rec](path)
			if r != nil {
				defer r.Close()
			}
			for who, err := range map[string]error{"Create": werr, "Open": rerr} {
				if c.reason == "" {
					if err != nil {
						t.Errorf("%s: %v", who, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), c.reason) ||
					!errors.Is(err, ErrUnsafeFile) && !strings.Contains(err.Error(), "is a directory") {
					t.Errorf("%s: %v, want refused with %q", who, err, c.reason)
				}
			}
			check(t)
		})
	}
}

// ownBuffer makes a valid buffer at path with the given mode and returns a
// check that its content did not change.
func ownBuffer(t *testing.T, path string, mode os.FileMode) func(*testing.T) {
	t.Helper()
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	v := mk(1)
	w.Write(&v)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return func(t *testing.T) {
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Error("the refused buffer changed")
		}
	}
}

// TestCreate_NewFileIsPrivate: a new buffer is created mode 0600 whatever
// the umask allows.
func TestCreate_NewFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "buf")
	w, err := Create[rec](path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o600 {
		t.Errorf("mode %v, want -rw-------", fi.Mode())
	}
}
