package ros

import (
	"strings"
	"testing"
)

func TestValidateNodeName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string // substring; "" = valid
	}{
		{"talker", ""},
		{"_hidden", ""},
		{"Node_2", ""},
		{"", "must not be empty"},
		{"2talker", "must not start with a number"},
		{"my-node", "alphanumeric"},
		{"ns/node", "alphanumeric"},
		{"a b", "alphanumeric"},
		{strings.Repeat("a", 255), ""},
		{strings.Repeat("a", 256), "longer than 255"},
	}
	for _, tt := range tests {
		err := ValidateNodeName(tt.name)
		checkErr(t, "ValidateNodeName("+tt.name+")", err, tt.wantErr)
	}
}

func TestValidateNamespace(t *testing.T) {
	tests := []struct {
		ns      string
		wantErr string
	}{
		{"/", ""},
		{"/demo", ""},
		{"/a/b_c/d1", ""},
		{"", "must not be empty"},
		{"demo", "must be absolute"},
		{"/demo/", "must not end with '/'"},
		{"/a//b", "repeated '/'"},
		{"/1a", "must not start with a number"},
		{"/a/2b", "must not start with a number"},
		{"/a-b", "alphanumeric"},
		{"/" + strings.Repeat("a", 244), ""},
		{"/" + strings.Repeat("a", 245), "longer than 245"},
	}
	for _, tt := range tests {
		checkErr(t, "ValidateNamespace("+tt.ns+")", ValidateNamespace(tt.ns), tt.wantErr)
	}
}

func TestValidateTopicName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"chatter", ""},
		{"/abs/name", ""},
		{"~", ""},
		{"~/ping", ""},
		{"{node}/x", ""},
		{"/a/{ns}/b", ""},
		{"foo__bar", ""}, // repeated underscores are accepted (rcl does not check)
		{"", "must not be empty"},
		{"1abc", "must not start with a number"},
		{"foo/", "must not end with '/'"},
		{"a//b", "repeated '/'"},
		{"a/1b", "must not start with a number"},
		{"~foo", "'~' must be followed by '/'"},
		{"a/~/b", "'~' is only allowed as the first character"},
		{"{node", "unbalanced '{'"},
		{"node}", "unmatched '}'"},
		{"{}", "empty substitution"},
		{"{a{b}}", "nested"},
		{"{1a}", "must not start with a number"},
		{"a b", "alphanumeric"},
		{"a-b", "alphanumeric"},
	}
	for _, tt := range tests {
		checkErr(t, "ValidateTopicName("+tt.name+")", ValidateTopicName(tt.name), tt.wantErr)
	}
}

func TestExpandTopicName(t *testing.T) {
	tests := []struct {
		name, node, ns string
		want           string
		wantErr        string
	}{
		{"chatter", "talker", "/", "/chatter", ""},
		{"chatter", "talker", "", "/chatter", ""},
		{"chatter", "talker", "/demo", "/demo/chatter", ""},
		{"a/b", "talker", "/demo", "/demo/a/b", ""},
		{"/abs", "talker", "/demo", "/abs", ""},
		{"~", "n", "/ns", "/ns/n", ""},
		{"~/ping", "n", "/ns", "/ns/n/ping", ""},
		{"~/ping", "n", "/", "/n/ping", ""},
		{"{node}/x", "n", "/ns", "/ns/n/x", ""},
		{"/{node}/x", "n", "/ns", "/n/x", ""},
		{"{ns}/x", "n", "/ns", "/ns/x", ""},
		{"{namespace}/x", "n", "/a/b", "/a/b/x", ""},
		{"{ns}/x", "n", "/", "/x", ""},
		{"{bogus}/x", "n", "/", "", "unknown substitution {bogus}"},
		{"~foo", "n", "/", "", "'~' must be followed by '/'"},
		{"x", "n", "relative", "/relative/x", ""},
		{"/" + strings.Repeat("a", 247), "n", "/", "", "longer than 247"},
		{"~", "{", "0", "", "invalid node name"},
		{"x", "n", "/a//b", "", "invalid namespace"},
	}
	for _, tt := range tests {
		got, err := ExpandTopicName(tt.name, tt.node, tt.ns)
		checkErr(t, "ExpandTopicName("+tt.name+")", err, tt.wantErr)
		if err == nil && got != tt.want {
			t.Errorf("ExpandTopicName(%q, %q, %q) = %q, want %q", tt.name, tt.node, tt.ns, got, tt.want)
		}
	}
}

func TestFullyQualifiedAndLoggerNames(t *testing.T) {
	tests := []struct{ ns, name, fqn, logger string }{
		{"/", "talker", "/talker", "talker"},
		{"/demo", "talker", "/demo/talker", "demo.talker"},
		{"/demo/sub", "talker", "/demo/sub/talker", "demo.sub.talker"},
	}
	for _, tt := range tests {
		if got := FullyQualifiedNodeName(tt.ns, tt.name); got != tt.fqn {
			t.Errorf("FullyQualifiedNodeName(%q, %q) = %q, want %q", tt.ns, tt.name, got, tt.fqn)
		}
		if got := LoggerName(tt.ns, tt.name); got != tt.logger {
			t.Errorf("LoggerName(%q, %q) = %q, want %q", tt.ns, tt.name, got, tt.logger)
		}
	}
}

func TestParseRemapRule(t *testing.T) {
	tests := []struct {
		in      string
		want    RemapRule
		wantErr string
	}{
		{"chatter:=chat", RemapRule{Kind: RemapTopicOrService, Match: "chatter", Replacement: "chat"}, ""},
		{"/a/b:=/c", RemapRule{Kind: RemapTopicOrService, Match: "/a/b", Replacement: "/c"}, ""},
		{"talker:chatter:=chat", RemapRule{Node: "talker", Kind: RemapTopicOrService, Match: "chatter", Replacement: "chat"}, ""},
		{"__node:=new", RemapRule{Kind: RemapNodeName, Replacement: "new"}, ""},
		{"__name:=new", RemapRule{Kind: RemapNodeName, Replacement: "new"}, ""},
		{"old:__node:=new", RemapRule{Node: "old", Kind: RemapNodeName, Replacement: "new"}, ""},
		{"__ns:=/robot1", RemapRule{Kind: RemapNamespace, Replacement: "/robot1"}, ""},
		{"rostopic://foo:=bar", RemapRule{Kind: RemapTopic, Match: "foo", Replacement: "bar"}, ""},
		{"n:rosservice://~/srv:=/s", RemapRule{Node: "n", Kind: RemapService, Match: "~/srv", Replacement: "/s"}, ""},
		{"~/x:=y", RemapRule{Kind: RemapTopicOrService, Match: "~/x", Replacement: "y"}, ""},
		{"chatter", RemapRule{}, "missing ':='"},
		{"chatter:=", RemapRule{}, "empty replacement"},
		{"__ns:=relative", RemapRule{}, "must be absolute"},
		{"__node:=bad-name", RemapRule{}, "alphanumeric"},
		{"/foo/*:=/bar", RemapRule{}, "wildcard"},
		{`/foo/bar:=/\1`, RemapRule{}, "backreferences"},
		{"1bad:=x", RemapRule{}, "must not start with a number"},
		{"x:=a//b", RemapRule{}, "repeated '/'"},
		{"bad-node:x:=y", RemapRule{}, "node prefix"},
	}
	for _, tt := range tests {
		got, err := ParseRemapRule(tt.in)
		checkErr(t, "ParseRemapRule("+tt.in+")", err, tt.wantErr)
		if err == nil && got != tt.want {
			t.Errorf("ParseRemapRule(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func mustRules(t *testing.T, specs ...string) []RemapRule {
	t.Helper()
	var out []RemapRule
	for _, s := range specs {
		r, err := ParseRemapRule(s)
		if err != nil {
			t.Fatalf("ParseRemapRule(%q): %v", s, err)
		}
		out = append(out, r)
	}
	return out
}

func TestRemapNodeNameAndNamespace(t *testing.T) {
	rules := mustRules(t, "other:__node:=x", "talker:__node:=speaker", "__node:=everyone", "speaker:__ns:=/loud", "__ns:=/quiet")
	if got := remapNodeName(rules, "talker"); got != "speaker" {
		t.Errorf("node talker -> %q, want speaker (targeted rule first in order)", got)
	}
	if got := remapNodeName(rules, "listener"); got != "everyone" {
		t.Errorf("node listener -> %q, want everyone", got)
	}
	if got := remapNamespace(rules, "speaker", "/"); got != "/loud" {
		t.Errorf("ns of speaker -> %q, want /loud (uses remapped name)", got)
	}
	if got := remapNamespace(rules, "everyone", "/x"); got != "/quiet" {
		t.Errorf("ns of everyone -> %q, want /quiet", got)
	}
	if got := remapNamespace(nil, "a", "/x"); got != "/x" {
		t.Errorf("no rules: %q, want /x", got)
	}
}

func TestRemapName(t *testing.T) {
	rules := mustRules(t,
		"chatter:=chat",              // relative match, expanded in the node's namespace
		"listener:/in:=/listener_in", // only for node listener
		"/in:=/everyone_in",
		"rostopic://only_topic:=/t",
		"rosservice://only_srv:=/s",
		"~/private:=/public",
		"/first:=/one",
		"/first:=/two", // never reached: first match wins
		"/bad:={bogus}",
	)
	tests := []struct {
		fqn, node, ns string
		service       bool
		want          string
		wantErr       string
	}{
		{"/demo/chatter", "talker", "/demo", false, "/demo/chat", ""},
		{"/chatter", "talker", "/demo", false, "/chatter", ""}, // exact FQN match only
		{"/in", "listener", "/", false, "/listener_in", ""},
		{"/in", "talker", "/", false, "/everyone_in", ""},
		{"/only_topic", "n", "/", false, "/t", ""},
		{"/only_topic", "n", "/", true, "/only_topic", ""},
		{"/only_srv", "n", "/", true, "/s", ""},
		{"/only_srv", "n", "/", false, "/only_srv", ""},
		{"/ns/n/private", "n", "/ns", false, "/public", ""},
		{"/first", "n", "/", false, "/one", ""},
		{"/bad", "n", "/", false, "", "unknown substitution"},
	}
	for _, tt := range tests {
		got, err := remapName(rules, tt.fqn, tt.service, tt.node, tt.ns)
		checkErr(t, "remapName("+tt.fqn+")", err, tt.wantErr)
		if err == nil && got != tt.want {
			t.Errorf("remapName(%q, service=%v, node %s%s) = %q, want %q", tt.fqn, tt.service, tt.ns, tt.node, got, tt.want)
		}
	}
}

func checkErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: unexpected error %v", what, err)
	case want != "" && err == nil:
		t.Errorf("%s: no error, want one containing %q", what, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%s: error %q, want it to contain %q", what, err, want)
	}
}
