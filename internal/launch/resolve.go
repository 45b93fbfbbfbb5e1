package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func isExecutableFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// discoverShare finds the share directory of DefaultPackage: the option,
// $FSMNODES_SHARE, or the nearest directory at or above dir that holds
// package.xml or both launch/ and params/.
func (l *loader) discoverShare(dir string) string {
	if l.opts.ShareDir != "" {
		return l.opts.ShareDir
	}
	if v, ok := l.lookupEnv(EnvShare); ok && v != "" {
		return v
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "package.xml")); err == nil {
			return d
		}
		if isDir(filepath.Join(d, "launch")) && isDir(filepath.Join(d, "params")) {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ""
}

func (l *loader) amentPrefixes() []string {
	v, _ := l.lookupEnv("AMENT_PREFIX_PATH")
	var out []string
	for _, p := range strings.Split(v, string(os.PathListSeparator)) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// pkgShare resolves $(find-pkg-share pkg).
func (l *loader) pkgShare(pkg string) (string, error) {
	if pkg == DefaultPackage && l.shareDir != "" {
		return l.shareDir, nil
	}
	for _, p := range l.amentPrefixes() {
		if d := filepath.Join(p, "share", pkg); isDir(d) {
			return d, nil
		}
	}
	if pkg == DefaultPackage {
		return "", fmt.Errorf("package %q not found: set %s or run from a checkout holding launch/ and params/", pkg, EnvShare)
	}
	return "", fmt.Errorf("package %q not found in AMENT_PREFIX_PATH", pkg)
}

// pkgPrefix turns a share directory into the install prefix
// ($(find-pkg-prefix)): <prefix>/share/<pkg> -> <prefix>; a checkout is its
// own prefix.
func (l *loader) pkgPrefix(pkg, share string) string {
	if filepath.Base(share) == pkg && filepath.Base(filepath.Dir(share)) == "share" {
		return filepath.Dir(filepath.Dir(share))
	}
	return share
}

// findExecutable finds executable exe of package pkg.
func (l *loader) findExecutable(pkg, exe string) (string, error) {
	if strings.ContainsRune(exe, '/') {
		return "", fmt.Errorf("exec %q must be a bare executable name", exe)
	}
	var tried []string
	try := func(dir string) (string, bool) {
		if dir == "" {
			return "", false
		}
		p := filepath.Join(dir, exe)
		tried = append(tried, dir)
		return p, isExecutableFile(p)
	}
	if pkg == DefaultPackage {
		bin := l.opts.BinDir
		if bin == "" {
			bin, _ = l.lookupEnv(EnvBin)
		}
		if p, ok := try(bin); ok {
			return p, nil
		}
		if l.shareDir != "" {
			if prefix := l.pkgPrefix(pkg, l.shareDir); prefix != l.shareDir {
				if p, ok := try(filepath.Join(prefix, "lib", pkg)); ok {
					return p, nil
				}
			} else if p, ok := try(filepath.Join(l.shareDir, "bin")); ok {
				return p, nil
			}
		}
	}
	for _, prefix := range l.amentPrefixes() {
		if p, ok := try(filepath.Join(prefix, "lib", pkg)); ok {
			return p, nil
		}
	}
	if pkg == DefaultPackage {
		if self, err := os.Executable(); err == nil {
			if p, ok := try(filepath.Dir(self)); ok {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("executable %q of package %q not found (looked in %s; set %s or build with `make build`)",
		exe, pkg, strings.Join(tried, ", "), EnvBin)
}

// findInPath resolves the command of an <executable>: a path with a slash
// is used as is, a bare name is looked up in PATH.
func findInPath(cmd string, s *scope) (string, error) {
	if strings.ContainsRune(cmd, '/') {
		if !filepath.IsAbs(cmd) {
			cmd = filepath.Join(filepath.Dir(s.file), cmd)
		}
		if !isExecutableFile(cmd) {
			return "", fmt.Errorf("command %q is not an executable file", cmd)
		}
		return cmd, nil
	}
	path, _ := s.getenv("PATH")
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if p := filepath.Join(d, cmd); isExecutableFile(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in PATH", cmd)
}

// FindLaunchFile finds the launch file called name in the share directory
// of pkg, searching it recursively, as `ros2 launch PKG FILE` does. For
// DefaultPackage without an install the share directory is found from the
// working directory or from the location of the running program.
func FindLaunchFile(pkg, name string, opts Options) (string, error) {
	l := &loader{opts: opts}
	if wd, err := os.Getwd(); err == nil {
		l.shareDir = l.discoverShare(wd)
	}
	if l.shareDir == "" {
		if self, err := os.Executable(); err == nil {
			l.shareDir = l.discoverShare(filepath.Dir(self))
		}
	}
	share, err := l.pkgShare(pkg)
	if err != nil {
		return "", err
	}
	if p := filepath.Join(share, "launch", name); !isDir(p) {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	var found []string
	_ = filepath.WalkDir(share, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = append(found, p)
		}
		return nil
	})
	switch len(found) {
	case 0:
		return "", fmt.Errorf("file %q was not found in the share directory of package %q (%s)", name, pkg, share)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("file %q is ambiguous in package %q: %s", name, pkg, strings.Join(found, ", "))
}

// FindExecutable finds executable exe of package pkg the way <node pkg exec>
// does (see Options.BinDir), for `fsmnodes run`.
func FindExecutable(pkg, exe string, opts Options) (string, error) {
	l := &loader{opts: opts}
	if wd, err := os.Getwd(); err == nil {
		l.shareDir = l.discoverShare(wd)
	}
	if l.shareDir == "" {
		if self, err := os.Executable(); err == nil {
			l.shareDir = l.discoverShare(filepath.Dir(self))
		}
	}
	return l.findExecutable(pkg, exe)
}
