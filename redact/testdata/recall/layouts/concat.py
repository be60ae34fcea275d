GITLAB_TOKEN = ("glpat-" "yOw2Y4JeMggqLBqjFAKE")
openai_key = 'sk-proj-' + 'KuMtZCxBPJiUQ6q3AAGLSfCjYp0PWd1PznEaKNAjT3' + 'BlbkFJeqidU7vPtLmsyp2NSjNG4X7eHxL5swIgaRz2FAKE'
