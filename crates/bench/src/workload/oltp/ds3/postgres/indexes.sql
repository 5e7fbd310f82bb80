-- Keys and indexes, built after the bulk load, one section per table ("-- table: <name>"); a
-- section runs only when its table is loaded. The set is DS3's PostgreSQL one (spec §1.2), its
-- INVENTORY(PROD_ID) index too: it duplicates the primary key, but DS3's updates maintain it.

-- table: categories
ALTER TABLE categories ADD PRIMARY KEY (category);

-- table: products
ALTER TABLE products ADD PRIMARY KEY (prod_id);
CREATE INDEX ix_prod_category ON products (category);
CREATE INDEX ix_prod_special ON products (special);
CREATE INDEX ix_prod_category_special ON products (category, special);
CREATE INDEX ix_prod_membership ON products (membership_item);
-- Full text: one configuration ('simple', no stemming) here and in every query.
CREATE INDEX ix_prod_title_fts ON products USING gin (to_tsvector('simple', title));
CREATE INDEX ix_prod_actor_fts ON products USING gin (to_tsvector('simple', actor));

-- table: inventory
ALTER TABLE inventory ADD PRIMARY KEY (prod_id);
CREATE INDEX ix_inv_prod_id ON inventory (prod_id);

-- table: customers
ALTER TABLE customers ADD PRIMARY KEY (customerid);
CREATE UNIQUE INDEX ix_cust_username ON customers (username);
CREATE UNIQUE INDEX ix_cust_username_password ON customers (username, password);

-- table: orders
ALTER TABLE orders ADD PRIMARY KEY (orderid);
CREATE INDEX ix_order_custid ON orders (customerid);

-- table: orderlines
CREATE UNIQUE INDEX ix_orderlines_orderid ON orderlines (orderid, orderlineid);

-- table: cust_hist
CREATE INDEX ix_cust_hist_customerid ON cust_hist (customerid);

-- table: membership
ALTER TABLE membership ADD PRIMARY KEY (customerid);

-- table: reviews
ALTER TABLE reviews ADD PRIMARY KEY (review_id);
CREATE INDEX ix_reviews_prod_id ON reviews (prod_id);
CREATE INDEX ix_reviews_stars ON reviews (stars);
CREATE INDEX ix_reviews_prod_stars ON reviews (prod_id, stars);

-- table: reviews_helpfulness
ALTER TABLE reviews_helpfulness ADD PRIMARY KEY (review_helpfulness_id);
CREATE INDEX ix_reviews_helpfulness_review_id ON reviews_helpfulness (review_id);
CREATE INDEX ix_reviews_helpfulness_customerid ON reviews_helpfulness (customerid);
