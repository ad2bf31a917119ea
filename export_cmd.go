package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/go-zookeeper/zk"
	"github.com/spf13/cobra"

	"github.com/zkherd/zkherd/subtree"
)

type exportOptions struct {
	acl bool
	out string
}

func newExportCmd(g *globalOptions) *cobra.Command {
	o := exportOptions{}
	cmd := &cobra.Command{
		Use:   "export PATH",
		Short: "Write a znode subtree to JSON: paths, data, stat essentials and (with --acl) ACLs",
		Long: `Reads the subtree at PATH (below the connect string's chroot, if any) and
writes it as JSON: every node, parents first, with its path, its data (UTF-8
text as is, anything else in base64), the essentials of its stat and, with
--acl, its ACL. Read-only. "zkherd import" writes such a file back into a
namespace.`,
		Example: "  zkherd export /app/config --server 127.0.0.1:2181 > config.json\n  zkherd export / --acl --out all.json --server 127.0.0.1:2181",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := args[0]
			s, cs, err := g.session(cmd.Context(), "export")
			if err != nil {
				return err
			}
			defer s.Close()
			if cs.Chroot != "" {
				root = path.Clean(cs.Chroot + "/" + root)
			}
			doc, err := subtree.Export(cmd.Context(), s.Conn(), root, subtree.ExportOptions{ACL: o.acl})
			switch {
			case errors.Is(err, zk.ErrNoNode):
				return usageErr("export %s: no such node", args[0])
			case errors.Is(err, zk.ErrNoAuth):
				return usageErr("export %s: %v: its ACL denies this session (give --auth user:password)", args[0], err)
			case err != nil:
				return usageErr("export %s: %v", args[0], err)
			}
			out := cmd.OutOrStdout()
			if o.out != "" && o.out != "-" {
				f, err := os.Create(o.out)
				if err != nil {
					return usageErr("--out: %v", err)
				}
				defer f.Close()
				out = f
			}
			if err := writeJSON(out, doc); err != nil {
				return fmt.Errorf("writing the export: %w", err)
			}
			if o.out != "" && o.out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "exported %d nodes of %s to %s\n", len(doc.Nodes), args[0], o.out)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&o.acl, "acl", false, "include each node's ACL")
	cmd.Flags().StringVar(&o.out, "out", "", "write to this file instead of standard output")
	return cmd
}

type importOptions struct {
	into      string
	overwrite bool
	acl       bool
	output    outputFormat
}

func newImportCmd(g *globalOptions) *cobra.Command {
	o := importOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Write an export's nodes into a namespace (for tests), refusing to overwrite unless told",
		Long: `Writes the nodes of FILE (made by "zkherd export"; - reads standard input) below
--into: the exported root becomes --into, and every other node keeps its path
relative to it. Nodes are created persistent with their data; ephemeral nodes
become persistent. When any target node exists, nothing is written unless
--overwrite is given (then their data is replaced). Only --into is touched:
it must be a namespace of its own, not / or /zookeeper.`,
		Example: "  zkherd import config.json --into /test/config --server 127.0.0.1:2181",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.into == "" {
				return usageErr("import needs --into /namespace (where the exported root goes)")
			}
			if err := o.output.check(); err != nil {
				return err
			}
			doc, err := readExport(cmd.InOrStdin(), args[0])
			if err != nil {
				return err
			}
			s, cs, err := g.session(cmd.Context(), "import")
			if err != nil {
				return err
			}
			defer s.Close()
			into := o.into
			if cs.Chroot != "" {
				into = path.Clean(cs.Chroot + "/" + into)
			}
			res, err := subtree.Import(cmd.Context(), s.Conn(), doc, subtree.ImportOptions{Into: into, Overwrite: o.overwrite, ACL: o.acl})
			switch {
			case errors.Is(err, subtree.ErrExists):
				return usageErr("%v (give --overwrite to replace their data)", err)
			case errors.Is(err, zk.ErrNoAuth):
				return usageErr("import into %s: not allowed to write there (give --auth user:password)", o.into)
			case err != nil:
				return usageErr("import into %s: %v", o.into, err)
			}
			if o.output == "json" {
				return writeJSON(cmd.OutOrStdout(), struct {
					Into string `json:"into"`
					subtree.Result
				}{o.into, res})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "imported %d nodes into %s: %d created, %d updated\n", res.Created+res.Updated, o.into, res.Created, res.Updated)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.into, "into", "", "namespace the exported root becomes, e.g. /test/config (required)")
	cmd.Flags().BoolVar(&o.overwrite, "overwrite", false, "replace the data of nodes that exist")
	cmd.Flags().BoolVar(&o.acl, "acl", false, "give created nodes the exported ACLs (default world:anyone:cdrwa)")
	o.output.register(cmd)
	return cmd
}

func readExport(stdin io.Reader, name string) (*subtree.Document, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		defer f.Close()
		r = f
	}
	var doc subtree.Document
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, usageErr("%s: not a zkherd export: %v", name, err)
	}
	if doc.Format != subtree.Format {
		return nil, usageErr("%s: not a zkherd export (format %q, want %q)", name, doc.Format, subtree.Format)
	}
	return &doc, nil
}
