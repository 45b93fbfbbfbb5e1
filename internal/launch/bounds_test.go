package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doublingLets returns a launch file whose <let> a<k> is a<k-1> twice,
// k = 1…n: a<n> is 2^n bytes long.
func doublingLets(n int, tail string) string {
	var b strings.Builder
	b.WriteString("<launch>\n<let name=\"a0\" value=\"x\"/>\n")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "<let name=\"a%d\" value=\"$(var a%d)$(var a%d)\"/>\n", k, k-1, k-1)
	}
	b.WriteString(tail)
	b.WriteString("</launch>\n")
	return b.String()
}

// TestLoad_SubstitutionBounds: thirty doubling <let>s (issue 25: they
// ended the launcher out of memory) are refused at the first value above
// MaxSubstitutedValue, naming that <let>; values up to the bound load; and
// many values each within the bound are refused once the load has
// substituted MaxSubstitutedTotal bytes.
func TestLoad_SubstitutionBounds(t *testing.T) {
	bin := fakeBin(t, "talker")
	over := 0 // the first doubling above the bound
	for 1<<over <= MaxSubstitutedValue {
		over++
	}
	many := ""
	for i := 0; i < MaxSubstitutedTotal/MaxSubstitutedValue+2; i++ {
		many += fmt.Sprintf("<let name=\"c%d\" value=\"$(var a%d)\"/>\n", i, over-1)
	}
	cases := []struct {
		name, xml, want string // want "": loads
	}{
		{"thirty doublings", doublingLets(30, ""),
			fmt.Sprintf(`bad.launch.xml:%d: <let name="a%d">: $(var a%d) makes a value of %d bytes, more than the %d a substituted value may have`,
				over+2, over, over-1, 1<<over, MaxSubstitutedValue)},
		{"up to the bound", doublingLets(over-1, ""), ""},
		{"total", doublingLets(over-1, many), fmt.Sprintf("the substitutions of this launch have produced more than %d bytes", MaxSubstitutedTotal)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "bad.launch.xml")
			if err := os.WriteFile(f, []byte(c.xml), 0o644); err != nil {
				t.Fatal(err)
			}
			d, err := Load(f, Options{BinDir: bin, ShareDir: dir, LookupEnv: env("PATH", os.Getenv("PATH"))})
			if c.want == "" {
				if err != nil || d == nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load succeeded, want error %q", c.want)
			}
			if msg := strings.ReplaceAll(err.Error(), dir+"/", ""); !strings.Contains(msg, c.want) {
				t.Errorf("error:\n%s\nwant:\n%s", msg, c.want)
			}
		})
	}
}
