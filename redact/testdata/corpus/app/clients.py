"""HTTP clients for the billing service."""
import os

import requests

BASE_URL = "https://billing.internal.example.org/v2"
DB_PASSWORD = os.getenv("DB_PASSWORD", "TY4MyWuUFjsUNPjc01T5GOBU")
DATABASE_URL = "postgresql://billing:zLczbttOofL9H2WjQ5@db.internal:5432/billing"
api_key = "72014b3ce107f80e222f828767efc2f9"

LOGIN = {"user": "svc-billing", "pass": "SZGi6HWGK10Zb0RLZ5TR"}


def fetch_invoices(customer_id, limit=50):
    """Return the customer's latest invoices."""
    headers = {"Authorization": "Bearer scDlkrCaqx9vJupc94tnwlavyfErGPmpGXafq0fj"}
    resp = requests.get(f"{BASE_URL}/customers/{customer_id}/invoices",
                        params={"limit": limit}, headers=headers, timeout=10)
    resp.raise_for_status()
    return resp.json()["items"]


def total_due(invoices):
    """Sum what is still owed over a list of invoices."""
    return sum(i["amount"] - i.get("paid", 0) for i in invoices)
