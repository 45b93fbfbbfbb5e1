package launch

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// element is one XML element of a launch file with the line it starts on.
type element struct {
	tag      string
	attrs    []xml.Attr
	children []*element
	line     int
	file     string
	used     map[string]bool
}

// parseXML reads a launch file into an element tree.
func parseXML(file string, r io.Reader) (*element, error) {
	dec := xml.NewDecoder(r)
	var stack []*element
	var root *element
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: invalid XML: %w", file, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			// InputPos before the token is where the previous token
			// (usually blank text) ended: the '<' of this tag.
			e := &element{tag: t.Name.Local, attrs: t.Attr, line: line, file: file, used: map[string]bool{}}
			if len(stack) == 0 {
				if root != nil {
					return nil, fmt.Errorf("%s:%d: more than one root element", file, line)
				}
				root = e
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && strings.TrimSpace(string(t)) != "" {
				e := stack[len(stack)-1]
				return nil, fmt.Errorf("%s:%d: unexpected text %q inside <%s>", file, e.line, strings.TrimSpace(string(t)), e.tag)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%s: no root element", file)
	}
	return root, nil
}

// errorf returns an error located at e.
func (e *element) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", e.file, e.line, fmt.Sprintf(format, args...))
}

// attr returns the raw value of attribute name and marks it used. ROS 2
// accepts both dashes and underscores in some attribute names; callers pass
// every spelling they accept.
func (e *element) attr(names ...string) (string, bool) {
	for _, n := range names {
		for _, a := range e.attrs {
			if a.Name.Local == n {
				e.used[n] = true
				return a.Value, true
			}
		}
	}
	return "", false
}

// checkAttrs reports the first attribute not in allowed.
func (e *element) checkAttrs(allowed ...string) error {
	for _, a := range e.attrs {
		ok := false
		for _, n := range allowed {
			if a.Name.Local == n {
				ok = true
				break
			}
		}
		if !ok {
			return e.errorf("unknown attribute %q on <%s> (allowed: %s)", a.Name.Local, e.tag, strings.Join(allowed, ", "))
		}
	}
	return nil
}
