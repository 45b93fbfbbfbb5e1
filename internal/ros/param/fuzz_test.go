package param

import (
	"os"
	"testing"
)

// FuzzParseFileBytes asks only that no input makes the parameter file
// parser panic, and that every accepted parameter has a valid name and a
// set value.
func FuzzParseFileBytes(f *testing.F) {
	for _, name := range []string{"good", "malformed", "mixed", "badname", "noros", "nested", "null"} {
		b, err := os.ReadFile("testdata/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a: &x {ros__parameters: {p: *x}}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		blocks, err := parseFileBytes(b)
		if err != nil {
			return
		}
		for _, blk := range blocks {
			for _, p := range blk.Params {
				if ValidateName(p.Name) != nil || !p.Value.IsSet() {
					t.Fatalf("accepted %q = %v", p.Name, p.Value)
				}
			}
		}
	})
}

// FuzzParseValue asks that -p values never panic the parser and that NaN
// never gets through.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"1", "1.5", "[1, 2]", "'x'", "{a: 1}", "[1, 'a']", ".nan", "[.nan]", "!!str 3", "*a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseValue(s)
		if err == nil && v.checkFinite() != nil {
			t.Fatalf("ParseValue(%q) accepted NaN: %v", s, v)
		}
	})
}
