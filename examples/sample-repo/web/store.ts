import { Money } from "./format";

export interface Product {
  sku: string;
  name: string;
  price: Money;
}

export class Catalog {
  private products = new Map<string, Product>();

  add(product: Product): void {
    if (this.products.has(product.sku)) {
      throw new Error(`duplicate sku ${product.sku}`);
    }
    this.products.set(product.sku, product);
  }

  search(term: string): Product[] {
    const needle = term.toLowerCase();
    const found: Product[] = [];
    for (const p of this.products.values()) {
      if (p.name.toLowerCase().includes(needle)) {
        found.push(p);
      }
    }
    return found;
  }
}

export const cheapest = (items: Product[]): Product | undefined => {
  let best: Product | undefined;
  for (const item of items) {
    if (!best || item.price.amount < best.price.amount) {
      best = item;
    }
  }
  return best;
};
