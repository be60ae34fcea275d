export interface Money {
  amount: number;
  currency: string;
}

export function formatMoney(m: Money, locale = "en-US"): string {
  return new Intl.NumberFormat(locale, { style: "currency", currency: m.currency }).format(m.amount);
}

export function parseMoney(text: string, currency: string): Money | null {
  const cleaned = text.replace(/[^0-9.-]/g, "");
  const amount = Number(cleaned);
  if (Number.isNaN(amount)) {
    return null;
  }
  return { amount, currency };
}
