package io.bloomoperator.examples.productapi;

/** A product as the API returns it. */
public record Product(long id, String name) {}
