"""Billing client."""
import os

# password: hunter2
# old token = phaIN9xfAGgfT0JpKtAYepKhFAKE (revoked?)
API_URL = os.environ.get("API_URL", "https://api.fake.example")
