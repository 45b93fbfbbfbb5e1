package msgs

// Regenerate every binding under msgs/ (and msgs/registry.go) from the
// .msg/.srv/.action definitions with: go generate ./msgs/...
//go:generate go run ../internal/msggen -root . -module github.com/fsmnodes/fsmnodes/msgs
