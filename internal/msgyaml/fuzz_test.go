package msgyaml

import (
	"testing"
	"time"
)

// FuzzDecode asks only that decoding arbitrary text never panics and that
// whatever decodes also renders and decodes again.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"{linear: {x: 0.5}}", "{header: {stamp: {sec: 1}}, names: [a, b], covariance: [1, 2, 3]}",
		"{poses: [{position: {x: 1}}, {}]}", "{byte: 300}", "&a {flag: true, nothing: *a}", "[1, 2",
		"{fixed: [{x: 1}, {y: 2}]}", "{data: !!binary AAEC}", "{big: 0x7fffffffffffffff}", "{f32: .inf}",
		"{header: auto}", "{values: [1e308, -1e-308, .nan]}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var m kitchen
		now := func() time.Time { return time.Unix(1, 2) }
		if err := DecodeWith(text, &m, Options{Now: now}); err != nil {
			return
		}
		out, err := Marshal(&m)
		if err != nil {
			t.Fatalf("Marshal after Decode(%q): %v", text, err)
		}
		var back kitchen
		if err := Decode(out, &back); err != nil {
			t.Fatalf("Decode(Marshal(Decode(%q))) failed: %v\n%s", text, err, out)
		}
		_ = Repr(&m)
	})
}
