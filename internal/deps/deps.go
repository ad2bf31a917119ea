//go:build tools

// Package deps pins dependencies that helpers add incrementally.
package deps
import (
 _ "github.com/go-zookeeper/zk"
 _ "charm.land/bubbletea/v2"
 _ "charm.land/lipgloss/v2"
 _ "charm.land/bubbles/v2/viewport"
 _ "github.com/HdrHistogram/hdrhistogram-go"
 _ "gopkg.in/yaml.v3"
 _ "github.com/google/uuid"
 _ "github.com/spf13/cobra"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "go.uber.org/goleak"
)
