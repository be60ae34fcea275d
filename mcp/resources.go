package mcp

import (
	"context"
	"embed"
	"io/fs"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Skills are the recipes for agents (skills/*/SKILL.md), served as the
// resource dialogfarm://skills/NAME and listed at dialogfarm://skills.
//
//go:embed skills
var Skills embed.FS

func (s *Server) addResources() {
	s.srv.AddResource(&sdk.Resource{URI: "dialogfarm://operators", Name: "operators", MIMEType: "application/json",
		Description: "every operator with its ports and param schema"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return jsonResource("dialogfarm://operators", s.store.Registry().List()), nil
	})
	s.srv.AddResource(&sdk.Resource{URI: "dialogfarm://pipelines", Name: "pipelines", MIMEType: "application/json",
		Description: "the stored pipelines and their revisions"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return jsonResource("dialogfarm://pipelines", s.store.List()), nil
	})
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "dialogfarm://pipelines/{name}", Name: "pipeline", MIMEType: "application/yaml",
		Description: "one pipeline as a pipeline file (YAML); updated on every commit"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		spec, _, err := s.store.Get(strings.TrimPrefix(uri, "dialogfarm://pipelines/"))
		if err != nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		data, err := spec.YAML()
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/yaml", Text: string(data)}}}, nil
	})
	s.srv.AddResource(&sdk.Resource{URI: "dialogfarm://runs", Name: "runs", MIMEType: "application/json",
		Description: "the runs of this server, newest first"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		if s.runs == nil {
			return jsonResource("dialogfarm://runs", []any{}), nil
		}
		return jsonResource("dialogfarm://runs", s.runs.List()), nil
	})
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "dialogfarm://runs/{id}", Name: "run", MIMEType: "application/json",
		Description: "one run's status"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		if s.runs == nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		info, err := s.runs.Get(strings.TrimPrefix(uri, "dialogfarm://runs/"))
		if err != nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return jsonResource(uri, info), nil
	})
	var names []string
	entries, _ := fs.ReadDir(Skills, "skills")
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	s.srv.AddResource(&sdk.Resource{URI: "dialogfarm://skills", Name: "skills", MIMEType: "application/json",
		Description: "recipes for agents building dialogfarm pipelines"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return jsonResource("dialogfarm://skills", names), nil
	})
	s.srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "dialogfarm://skills/{name}", Name: "skill", MIMEType: "text/markdown",
		Description: "one SKILL.md"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		data, err := Skills.ReadFile("skills/" + strings.TrimPrefix(uri, "dialogfarm://skills/") + "/SKILL.md")
		if err != nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: string(data)}}}, nil
	})
}

func jsonResource(uri string, v any) *sdk.ReadResourceResult {
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: jsonText(v)}}}
}
