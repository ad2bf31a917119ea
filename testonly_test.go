package main

import "github.com/spf13/cobra"

// Helpers only the tests use, kept out of the binary.

func newRootCmd() *cobra.Command { return newRootCmdWith(&globalOptions{}) }
