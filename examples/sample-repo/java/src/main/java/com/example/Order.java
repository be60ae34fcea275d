package com.example;

import java.util.ArrayList;
import java.util.List;

public class Order {
    private final String customer;
    private final List<String> skus = new ArrayList<>();
    private boolean paid;

    public Order(String customer) {
        if (customer == null || customer.isBlank()) {
            throw new IllegalArgumentException("customer required");
        }
        this.customer = customer;
    }

    public void addItem(String sku, Inventory inventory) {
        if (!inventory.remove(sku, 1)) {
            throw new IllegalStateException("out of stock: " + sku);
        }
        skus.add(sku);
    }

    public int size() {
        return skus.size();
    }

    public void markPaid() {
        paid = true;
    }

    public String summary() {
        StringBuilder sb = new StringBuilder(customer);
        sb.append(": ");
        sb.append(skus.size()).append(" items");
        if (paid) {
            sb.append(" (paid)");
        }
        return sb.toString();
    }
}
