package analyst

import "dialogfarm/internal/chatmodel"

// ModelConfig names an OpenAI-compatible chat model (see chatmodel.Config).
type ModelConfig = chatmodel.Config

// DefaultModelConfig configures no model (Model is empty).
func DefaultModelConfig() ModelConfig { return chatmodel.DefaultConfig() }
