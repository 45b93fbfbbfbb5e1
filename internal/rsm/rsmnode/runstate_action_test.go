package rsmnode

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fsmnodes/fsmnodes/internal/rsm"
)

func TestParseRoutinePlugins(t *testing.T) {
	cases := []struct {
		in   []string
		want map[string]string
		err  string
	}{
		{nil, map[string]string{}, ""},
		{[]string{"Stairs=action:/my_robot/stairs"}, map[string]string{"Stairs": "action:/my_robot/stairs"}, ""},
		{[]string{" Dock = mypkg::DockState ", "Stairs=action:stairs"},
			map[string]string{"Dock": "mypkg::DockState", "Stairs": "action:stairs"}, ""},
		{[]string{"Stairs"}, nil, "want <routine>=<plugin>"},
		{[]string{"=action:/x"}, nil, "want <routine>=<plugin>"},
		{[]string{"Stairs="}, nil, "want <routine>=<plugin>"},
		{[]string{"A=x", "A=y"}, nil, "listed twice"},
	}
	for _, c := range cases {
		got, err := ParseRoutinePlugins(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// FuzzParseRoutinePlugins: any entry is parsed or refused with an error,
// never a panic; what is accepted also passes the state machine's check or
// is refused there with an error.
func FuzzParseRoutinePlugins(f *testing.F) {
	for _, s := range []string{"Stairs=action:/my_robot/stairs", "=", "a=b=c", "x=action:", " = "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		m, err := ParseRoutinePlugins([]string{entry})
		if err != nil {
			return
		}
		cfg := rsm.Config{RoutinePlugins: m}
		_ = cfg.Validate()
	})
}
