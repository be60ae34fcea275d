GITLAB_TOKEN = ("glpat-" "92WHRt0YqtrIlpY3FAKE")
openai_key = 'sk-proj-' + 'TOc40wHxLrcC8GqyU5PrShWLseQCdMmx3mWP4JeVT3' + 'BlbkFJSpojqZgBuysjsmN5ln6ZGvXJkp480VPKrhiOFAKE'
