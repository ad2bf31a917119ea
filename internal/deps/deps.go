//go:build tools

// Package deps pins dependencies that helpers add incrementally.
package deps

import (
	_ "charm.land/bubbles/v2/viewport"
	_ "charm.land/bubbletea/v2"
	_ "charm.land/lipgloss/v2"
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/go-zookeeper/zk"
	_ "github.com/google/uuid"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "go.yaml.in/yaml/v3"
)
