// Bank account fixture for configgen tests.

export interface Account {
  id: string;
  balance: number;
}

export function transfer(from: Account, to: Account, amount: number): void {
  if (amount <= 0) {
    throw new Error("amount must be positive");
  }
  if (from.balance < amount) {
    throw new Error("insufficient funds");
  }
  from.balance -= amount;
  to.balance += amount;
}

export class Ledger {
  private entries: string[] = [];

  record(entry: string): number {
    const stamped = `${Date.now()} ${entry}`;
    this.entries.push(stamped);
    return this.entries.length;
  }
}

export const total = (accounts: Account[]): number => {
  let sum = 0;
  for (const a of accounts) {
    sum += a.balance;
  }
  return sum;
};
