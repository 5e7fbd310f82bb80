-- DS3's foreign keys (spec §1.1), added after the keys they point to, one section per child
-- table ("-- table: <name>"). None points at PRODUCTS from ORDERLINES, CUST_HIST or INVENTORY.

-- table: orders
ALTER TABLE orders ADD CONSTRAINT fk_orders_customerid
    FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE SET NULL;

-- table: orderlines
ALTER TABLE orderlines ADD CONSTRAINT fk_orderlines_orderid
    FOREIGN KEY (orderid) REFERENCES orders (orderid) ON DELETE CASCADE;

-- table: cust_hist
ALTER TABLE cust_hist ADD CONSTRAINT fk_cust_hist_customerid
    FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;

-- table: membership
ALTER TABLE membership ADD CONSTRAINT fk_membership_customerid
    FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;

-- table: reviews
ALTER TABLE reviews ADD CONSTRAINT fk_reviews_prod_id
    FOREIGN KEY (prod_id) REFERENCES products (prod_id) ON DELETE CASCADE;
ALTER TABLE reviews ADD CONSTRAINT fk_reviews_customerid
    FOREIGN KEY (customerid) REFERENCES customers (customerid) ON DELETE CASCADE;

-- table: reviews_helpfulness
ALTER TABLE reviews_helpfulness ADD CONSTRAINT fk_reviews_helpfulness_review_id
    FOREIGN KEY (review_id) REFERENCES reviews (review_id) ON DELETE CASCADE;
