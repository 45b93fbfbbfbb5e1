package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pending are documents that an open issue asks for and that code already
// names; mentioning them is not an error until they exist. Once a file
// exists the test fails until its entry is removed, so the list cannot
// outlive its reason.
var pending = map[string]string{}

// TestRepository is the check itself: the repository's docs and comments
// cite nothing outside it, and every relative link resolves.
func TestRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	for f := range pending {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			t.Errorf("%s exists now: remove it from pending", f)
		}
	}
	// This package's own sources quote the forms it rejects.
	// scripts/ros2-peer.sh and scripts/gazebo-peer.sh are the build
	// recipes that look for the ROS 2 and Gazebo source snapshots CI
	// places next to the clone (as .ci/run, which has no checked
	// extension, does by calling them); naming that folder is their job,
	// not a citation.
	problems, err := Check(root, "internal/docscheck/", "scripts/ros2-peer.sh", "scripts/gazebo-peer.sh")
	if err != nil {
		t.Fatal(err)
	}
	failed := false
	for _, p := range problems {
		if why, ok := pending[p.Missing]; ok {
			t.Logf("%s (pending: %s)", p, why)
			continue
		}
		t.Error(p)
		failed = true
	}
	if failed {
		t.Log("restate external material in docs/ and cite it as docs/<file>.md#<anchor>; links may leave the repository only for the hosts of AllowedHost")
	}
}

// write creates files (path → content) below a new temporary root.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fill.Replace(content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// fill turns the placeholders of the test data into the forms the checker
// rejects; the source keeps placeholders so that a plain grep of the
// repository for those forms finds only real citations.
var fill = strings.NewReplacer("{seed}", "seed", "{sh}", "shared", "{sys}", "systems", "{par}", "\u00a7")

func TestCheck_Findings(t *testing.T) {
	root := write(t, map[string]string{
		"docs/a.md": "# Title A\n\n## The `cs` transitions (σ)\n\n## Dup\n\n## Dup\n\n<a id=\"custom\"></a>\n",
		"docs/b.md": strings.Join([]string{
			"# B",
			"[ok](a.md#the-cs-transitions-σ) [dup](a.md#dup-1) [custom](a.md#custom) [self](#b) [img](img/x.svg)",
			"[missing file](c.md) [missing anchor](a.md#nope) [out](../../etc/passwd) [abs](/etc/passwd)",
			"[upstream](https://github.com/ros2/rmw_cyclonedds) [blog](https://example.com/post)",
			"As {seed} 002 says, and {seed}s 000/003.",
			"See ../{sh}/docs/x.md and /work/{sh}/seeds, and docs/{sys}/velma.md.",
			"The wire rules (ros2-wire.md {par}7).",
			"```sh",
			"[not a link](nowhere.md)",
			"```",
			"`[code](a.md)` and a mention of a.md#dup and of gone.md.",
			"[ref]: https://example.org/x",
		}, "\n"),
		"docs/img/x.svg": "<svg/>",
		"internal/x/x.go": strings.Join([]string{
			"package x",
			"// Transitions follow docs/a.md#dup (fine) and docs/a.md#missing.",
			"// The σ table of {seed} 000 (velma-kinematics.md {par}2.5).",
			"// Read ../../README.md and notes/dds-api.md.",
			`// Linked from https://github.com/{sh}/docs (an upstream URL).`,
		}, "\n"),
		"README.md":         "[docs](docs/b.md) [bad](docs/nothere.md#x)\n",
		"params/p.yaml":     "# from docs/{sys}/velma.md\n",
		".hidden/skip.md":   "{seed} 000\n",
		"bin/skip.md":       "{seed} 000\n",
		"docs/notes.txt":    "{seed} 000 (not a checked file kind)\n",
		"internal/x/ok.go":  "package x\n// See docs/a.md and docs/b.md#b.\n",
		"docs/fences.md":    "# F\n\n````md\n```\n[x](nowhere.md)\n```\n````\n\n[after](a.md)\n",
		"docs/reference.md": "# R\n\n[r]: a.md#nope\n",
		"skipped/x.md":      "{seed} 000\n",
	})
	problems, err := Check(root, "skipped/")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	missing := map[string]bool{}
	for _, p := range problems {
		got[p.String()] = true
		if p.Missing != "" {
			missing[p.Missing] = true
		}
	}
	for _, m := range []string{"docs/c.md", "docs/nothere.md", "gone.md", "velma-kinematics.md", "notes/dds-api.md"} {
		if !missing[m] {
			t.Errorf("no problem has Missing = %q", m)
		}
	}
	want := []string{
		"README.md:1: link docs/nothere.md#x: docs/nothere.md does not exist",
		"docs/b.md:3: link c.md: docs/c.md does not exist",
		"docs/b.md:3: link a.md#nope: docs/a.md has no section #nope",
		"docs/b.md:3: link ../../etc/passwd leaves the repository",
		"docs/b.md:3: link /etc/passwd is an absolute path",
		"docs/b.md:4: link https://example.com/post leaves the repository for example.com, which is not an upstream project (docscheck.AllowedHost)",
		`docs/b.md:5: cites a seed ("{seed} 002"): restate it in docs/ and cite the section (docs/<file>.md#<anchor>)`,
		`docs/b.md:6: points outside the repository ("../{sh}")`,
		"docs/b.md:6: mentions ../{sh}/docs/x.md, which is not in the repository",
		"docs/b.md:6: mentions docs/{sys}/velma.md, which is not in the repository",
		"docs/b.md:7: mentions ros2-wire.md, which is not in the repository",
		`docs/b.md:7: cites a numbered section ("{par}7") of a document that is not in the repository: cite docs/<file>.md#<anchor>`,
		"docs/b.md:11: mentions gone.md, which is not in the repository",
		"docs/b.md:12: link https://example.org/x leaves the repository for example.org, which is not an upstream project (docscheck.AllowedHost)",
		"docs/reference.md:3: link a.md#nope: docs/a.md has no section #nope",
		"internal/x/x.go:2: docs/a.md has no section #missing",
		`internal/x/x.go:3: cites a seed ("{seed} 000"): restate it in docs/ and cite the section (docs/<file>.md#<anchor>)`,
		`internal/x/x.go:3: cites a numbered section ("{par}2.5") of a document that is not in the repository: cite docs/<file>.md#<anchor>`,
		"internal/x/x.go:3: mentions velma-kinematics.md, which is not in the repository",
		"internal/x/x.go:4: mentions notes/dds-api.md, which is not in the repository",
		`params/p.yaml:1: points outside the repository ("docs/{sys}/")`,
		"params/p.yaml:1: mentions docs/{sys}/velma.md, which is not in the repository",
	}
	for _, w := range want {
		w = fill.Replace(w)
		if !got[w] {
			t.Errorf("missing problem %q", w)
		}
		delete(got, w)
	}
	for p := range got {
		t.Errorf("unexpected problem %q", p)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"One iteration":          "one-iteration",
		"ve_body (safety layer)": "ve_body-safety-layer",
		"4. QoS (rmw_cyclonedds `create_readwrite_qos`)": "4-qos-rmw_cyclonedds-create_readwrite_qos",
		"Messages and services (`rsm_msgs`)":             "messages-and-services-rsm_msgs",
		"cs: σ, τ and ε":                                 "cs-σ-τ-and-ε",
		"Fixed or changed relative to the original":      "fixed-or-changed-relative-to-the-original",
		"  A — B  ": "a--b",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
