"""Billing client."""
import os

# password: hunter2
# old token = RArtxseWR5ZlayglhGoK1dldFAKE (revoked?)
API_URL = os.environ.get("API_URL", "https://api.fake.example")
