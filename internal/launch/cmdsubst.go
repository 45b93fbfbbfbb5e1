package launch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// command runs cmd for $(command cmd [on_stderr]) as ros2 launch's Command
// substitution does: the text is split into words like a POSIX shell
// would (quotes and backslashes, no expansion), the program runs in the
// launch's environment and its standard output is the value. A non-zero
// exit is an error. on_stderr says what output on standard error means:
// "fail" (the default) an error, "warn" a warning, "ignore" nothing,
// "capture" that it is appended to the value.
func (s *scope) command(cmd, onStderr string) (string, error) {
	switch onStderr {
	case "fail", "warn", "ignore", "capture":
	default:
		return "", fmt.Errorf("on_stderr %q is not one of fail, warn, ignore, capture", onStderr)
	}
	argv, err := shellWords(cmd)
	if err != nil {
		return "", err
	}
	if len(argv) == 0 {
		return "", errors.New("empty command")
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		if path, err = s.lookPath(path); err != nil {
			return "", err
		}
	}
	c := exec.Command(path, argv[1:]...)
	c.Args[0] = argv[0]
	c.Env = s.environ()
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("%v: %s", err, msg)
		}
		return "", err
	}
	out := stdout.String()
	if stderr.Len() > 0 {
		msg := strings.TrimSpace(stderr.String())
		switch onStderr {
		case "fail":
			return "", fmt.Errorf("the command wrote to standard error (pass on_stderr warn, ignore or capture to accept it): %s", msg)
		case "warn":
			s.l.warnf("$(command %s) wrote to standard error: %s", cmd, msg)
		case "capture":
			out += stderr.String()
		}
	}
	return out, nil
}

// lookPath finds a bare command name in the launch's PATH.
func (s *scope) lookPath(name string) (string, error) {
	pathEnv, ok := s.getenv("PATH")
	if !ok {
		pathEnv = "/bin:/usr/bin" // what execvp and Python use without PATH
	}
	for _, dir := range strings.Split(pathEnv, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH", name)
}

// environ is the process environment with the scope's <set_env> and
// <unset_env> applied.
func (s *scope) environ() []string {
	env := os.Environ()
	for _, op := range s.env {
		prefix := op.name + "="
		kept := env[:0]
		for _, kv := range env {
			if !strings.HasPrefix(kv, prefix) {
				kept = append(kept, kv)
			}
		}
		env = kept
		if !op.unset {
			env = append(env, prefix+op.value)
		}
	}
	return env
}

// shellWords splits text into words as a POSIX shell does without
// expansions (Python's shlex.split, which ros2 launch uses): blanks
// separate words, '...' is literal, "..." is literal but for \" \\ \$ \`
// and a backslash-newline, and a backslash outside quotes escapes the next
// character.
func shellWords(text string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			k := strings.IndexByte(text[i+1:], '\'')
			if k < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			cur.WriteString(text[i+1 : i+1+k])
			i += k + 1
			inWord = true
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(text); i++ {
				d := text[i]
				if d == '"' {
					closed = true
					break
				}
				if d == '\\' && i+1 < len(text) && strings.IndexByte("\"\\$`\n", text[i+1]) >= 0 {
					i++
					if text[i] != '\n' {
						cur.WriteByte(text[i])
					}
					continue
				}
				cur.WriteByte(d)
			}
			if !closed {
				return nil, errors.New(`unterminated " quote`)
			}
		case c == '\\':
			if i+1 >= len(text) {
				return nil, errors.New("trailing backslash")
			}
			i++
			if text[i] != '\n' {
				cur.WriteByte(text[i])
				inWord = true
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
