// Package docscheck keeps the repository's documentation self-contained.
//
// Check looks at the repository's text files and reports
//
//   - citations of material that is not in the repository: the numbered
//     specification seeds the project started from, numbered sections of
//     documents (our docs are cited by anchor instead, as in
//     docs/velma.md#cs-transitions), paths outside the repository (the
//     shared reference directory beside it, absolute paths of the build
//     machine), and mentions of Markdown files that do not exist in the
//     repository;
//   - Markdown links that leave the repository for anything but a public
//     upstream project (AllowedHost);
//   - relative Markdown links, and file.md#anchor citations in code, whose
//     file or heading anchor does not exist.
//
// The test of this package runs Check on the repository itself.
package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// AllowedHost reports whether a Markdown link may point to host: the
// public upstream projects we build on or re-implement (ROS 2 and its
// documentation, the original robots' repositories, Cyclone DDS, Go,
// Foxglove, whose WebSocket protocol foxglove_bridge speaks).
func AllowedHost(host string) bool { return allowedHosts[strings.ToLower(host)] }

// allowedHosts is read-only.
var allowedHosts = map[string]bool{
	"github.com":                         true,
	"gitlab.com":                         true,
	"docs.ros.org":                       true,
	"design.ros2.org":                    true,
	"ros.org":                            true,
	"www.ros.org":                        true,
	"docs.nav2.org":                      true,
	"cyclonedds.io":                      true,
	"foxglove.dev":                       true,
	"emanual.robotis.com":                true,
	"project-leptan-docs.readthedocs.io": true,
	"go.dev":                             true,
	"pkg.go.dev":                         true,
}

// Problem is one finding, at a line of a file (path relative to the root,
// with forward slashes).
type Problem struct {
	File string
	Line int
	Msg  string
	// Missing is the mentioned or linked file that does not exist, as
	// written, when that is the finding; empty otherwise.
	Missing string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// checked are the file kinds whose text is scanned for citations.
var checked = map[string]bool{
	".go": true, ".md": true, ".yaml": true, ".yml": true, ".xml": true,
	".msg": true, ".srv": true, ".action": true, ".sh": true,
}

var (
	reSeed    = regexp.MustCompile(`(?i)\bseeds?\s+\d{3}\b`)
	reSection = regexp.MustCompile(`§\s*\d+(?:\.\d+)*`)
	reOutside = regexp.MustCompile(`(?:\.\./)+shared\b|\bshared[/]|(?:^|[\s("'\x60])/work/|\bdocs/systems[/]`)
	reURL     = regexp.MustCompile(`https?://[^\s)>\]"'\x60]+`)
	// reMDRef is a mention of a Markdown file, with an optional anchor.
	reMDRef = regexp.MustCompile(`(?:^|[^\w./-])((?:[\w.-]+/)*[\w.-]+\.md)(#[\p{L}\p{N}_-]+)?\b`)
	// reLink is an inline Markdown link or image: [text](target "title").
	reLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// reRefDef is a reference-style link definition: [label]: target.
	reRefDef  = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	reHeading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	reHTMLID  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	reCode    = regexp.MustCompile("`[^`]*`")
)

// Check scans the repository at root and returns its problems, sorted.
// Files whose path (relative to root, with forward slashes) starts with
// one of skip are left out.
func Check(root string, skip ...string) ([]Problem, error) {
	files, err := listFiles(root)
	if err != nil {
		return nil, err
	}
	c := &checker{root: root, anchors: map[string]map[string]bool{}}
	for _, f := range files {
		if !checked[filepath.Ext(f)] || skipped(f, skip) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree
			}
			return nil, err
		}
		c.file(f, data)
	}
	sort.Slice(c.problems, func(i, j int) bool {
		a, b := c.problems[i], c.problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Msg < b.Msg
	})
	return c.problems, nil
}

func skipped(f string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// listFiles returns the files git knows (tracked, or new and not ignored)
// or, outside a git work tree, every file below root that is not in a
// hidden or build directory.
func listFiles(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 {
				files = append(files, string(f))
			}
		}
		sort.Strings(files)
		return files, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || n == "bin" || n == "node_modules" || n == "build" || n == "install" || n == "log") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	return files, err
}

type checker struct {
	root     string
	anchors  map[string]map[string]bool // Markdown file → its anchors
	problems []Problem
}

func (c *checker) add(file string, line int, format string, args ...any) {
	c.problems = append(c.problems, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (c *checker) file(name string, data []byte) {
	isMD := strings.HasSuffix(name, ".md")
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		c.citations(name, n, line)
		if !isMD {
			c.mdMentions(name, n, line)
			continue
		}
		if f := fenceMarker(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence[:3]) && len(f) >= len(fence) && strings.TrimSpace(line) == f:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		text := line
		if !strings.Contains(line, "](") && !strings.Contains(line, "]:") {
			c.mdMentions(name, n, text)
			continue
		}
		for _, m := range reLink.FindAllStringSubmatchIndex(reCode.ReplaceAllStringFunc(line, blank), -1) {
			c.link(name, n, line[m[2]:m[3]])
			text = text[:m[0]] + strings.Repeat(" ", m[1]-m[0]) + text[m[1]:]
		}
		if m := reRefDef.FindStringSubmatch(line); m != nil {
			c.link(name, n, m[1])
			continue
		}
		c.mdMentions(name, n, text)
	}
}

// stripURLs removes web addresses, which may cite anything upstream.
func stripURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return reURL.ReplaceAllString(s, "")
}

// blank replaces a code span by spaces of the same length, so that link
// positions found in the result are valid in the original line.
func blank(s string) string { return strings.Repeat(" ", len(s)) }

// fenceMarker returns the fence (``` or ~~~ run) a line opens or closes.
func fenceMarker(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, ch := range []string{"`", "~"} {
		if strings.HasPrefix(t, ch+ch+ch) {
			i := 0
			for i < len(t) && t[i] == ch[0] {
				i++
			}
			return t[:i]
		}
	}
	return ""
}

// citations reports material cited from outside the repository.
func (c *checker) citations(name string, n int, line string) {
	lower := strings.ToLower(line)
	if strings.Contains(lower, "seed") && reSeed.MatchString(line) {
		c.add(name, n, "cites a seed (%q): restate it in docs/ and cite the section (docs/<file>.md#<anchor>)", reSeed.FindString(line))
	}
	if strings.Contains(line, "§") && reSection.MatchString(line) {
		c.add(name, n, "cites a numbered section (%q) of a document that is not in the repository: cite docs/<file>.md#<anchor>", reSection.FindString(line))
	}
	if !strings.Contains(lower, "shared") && !strings.Contains(line, "/work/") && !strings.Contains(line, "systems") {
		return
	}
	if m := reOutside.FindString(stripURLs(line)); m != "" {
		c.add(name, n, "points outside the repository (%q)", strings.TrimSpace(m))
	}
}

// mdMentions checks every "x.md" or "x.md#anchor" in text.
func (c *checker) mdMentions(name string, n int, text string) {
	if !strings.Contains(text, ".md") {
		return
	}
	text = stripURLs(text)
	for _, m := range reMDRef.FindAllStringSubmatch(text, -1) {
		file, anchor := m[1], strings.TrimPrefix(m[2], "#")
		target, ok := c.resolveMention(name, file)
		if !ok {
			c.add(name, n, "mentions %s, which is not in the repository", file)
			c.problems[len(c.problems)-1].Missing = file
			continue
		}
		if anchor != "" && !c.hasAnchor(target, anchor) {
			c.add(name, n, "%s has no section #%s", target, anchor)
		}
	}
}

// resolveMention finds a mentioned Markdown file: relative to the
// mentioning file, to the root, or to docs/.
func (c *checker) resolveMention(from, file string) (string, bool) {
	for _, cand := range []string{path.Join(path.Dir(from), file), path.Clean(file), path.Join("docs", file)} {
		if strings.HasPrefix(cand, "../") {
			continue
		}
		if c.exists(cand) {
			return cand, true
		}
	}
	return "", false
}

func (c *checker) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(rel)))
	return err == nil
}

// link checks one Markdown link target found in file name.
func (c *checker) link(name string, n int, target string) {
	u, err := url.Parse(target)
	if err != nil {
		c.add(name, n, "link %q: %v", target, err)
		return
	}
	switch {
	case u.Scheme == "http" || u.Scheme == "https":
		if !AllowedHost(u.Hostname()) {
			c.add(name, n, "link %s leaves the repository for %s, which is not an upstream project (docscheck.AllowedHost)", target, u.Hostname())
		}
		return
	case u.Scheme == "mailto":
		return
	case u.Scheme != "" || u.Host != "":
		c.add(name, n, "link %s leaves the repository", target)
		return
	}
	file := name
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			c.add(name, n, "link %s is an absolute path", target)
			return
		}
		file = path.Join(path.Dir(name), u.Path)
		if file == ".." || strings.HasPrefix(file, "../") {
			c.add(name, n, "link %s leaves the repository", target)
			return
		}
		if !c.exists(file) {
			c.add(name, n, "link %s: %s does not exist", target, file)
			c.problems[len(c.problems)-1].Missing = file
			return
		}
	}
	if u.Fragment != "" && strings.HasSuffix(file, ".md") && !c.hasAnchor(file, u.Fragment) {
		c.add(name, n, "link %s: %s has no section #%s", target, file, u.Fragment)
	}
}

// hasAnchor reports whether the Markdown file rel has the anchor.
func (c *checker) hasAnchor(rel, anchor string) bool {
	a, ok := c.anchors[rel]
	if !ok {
		data, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(rel)))
		if err != nil {
			return false
		}
		a = Anchors(data)
		c.anchors[rel] = a
	}
	return a[strings.ToLower(anchor)]
}

// Anchors returns the anchors of a Markdown document as GitHub generates
// them for its headings (duplicates get -1, -2, ...), plus explicit
// <a id="..."> or <a name="..."> anchors.
func Anchors(doc []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if f := fenceMarker(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence[:3]) && len(f) >= len(fence) && strings.TrimSpace(line) == f:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range reHTMLID.FindAllStringSubmatch(line, -1) {
			anchors[strings.ToLower(m[1])] = true
		}
		m := reHeading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := Slug(m[2])
		if k := seen[s]; k > 0 {
			anchors[fmt.Sprintf("%s-%d", s, k)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

// Slug turns heading text into its GitHub anchor: lower case, letters,
// digits, '_' and '-' kept, spaces turned into '-', everything else
// (punctuation, backticks, emphasis) dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
