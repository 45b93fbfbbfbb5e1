//go:build tools

// Package tools pins module dependencies that are chosen for the project
// before every package that uses them exists.
package tools

import (
	_ "github.com/spf13/viper"
	_ "go.uber.org/zap"
	_ "go.yaml.in/yaml/v3"
)
