package com.example;

import java.util.HashMap;
import java.util.Map;

public class Inventory {
    private final Map<String, Integer> stock = new HashMap<>();

    public void add(String sku, int quantity) {
        stock.merge(sku, quantity, Integer::sum);
    }

    public boolean remove(String sku, int quantity) {
        int current = stock.getOrDefault(sku, 0);
        if (current < quantity) {
            return false;
        }
        stock.put(sku, current - quantity);
        return true;
    }

    public int count(String sku) {
        return stock.getOrDefault(sku, 0);
    }
}
