package velmanode

import "testing"

func TestBufferPrefix(t *testing.T) {
	for _, c := range []struct {
		param     string
		domain    uint32
		namespace string
		want      string
	}{
		{"", 0, "/", "/dev/shm/fsmnodes_velma"},
		{"", 0, "", "/dev/shm/fsmnodes_velma"},
		{"", 0, "/velma", "/dev/shm/fsmnodes_velma_velma"},
		{"", 42, "/", "/dev/shm/fsmnodes_velma_domain42"},
		{"", 42, "/velma", "/dev/shm/fsmnodes_velma_domain42_velma"},
		{"", 7, "/a/b/", "/dev/shm/fsmnodes_velma_domain7_a_b"},
		{"/tmp/x", 42, "/velma", "/tmp/x"},
	} {
		if got := BufferPrefix(c.param, c.domain, c.namespace); got != c.want {
			t.Errorf("BufferPrefix(%q, %d, %q) = %q, want %q", c.param, c.domain, c.namespace, got, c.want)
		}
	}
}

func TestRuntimePriorityBelowLoop(t *testing.T) {
	for _, c := range []struct{ want, loop, got int }{
		{1, 20, 1}, {10, 20, 10}, {30, 20, 19}, {1, 0, 0}, {1, 1, 0}, {0, 20, 0}, {5, 2, 1},
	} {
		if g := runtimePriority(c.want, c.loop); g != c.got {
			t.Errorf("runtimePriority(%d, %d) = %d, want %d", c.want, c.loop, g, c.got)
		}
	}
}
