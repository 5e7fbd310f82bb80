-- DS3's transactions as server-side functions, and the restock trigger. Written for storbench
-- from the behaviour described in spec §3.1, with DS3's PostgreSQL bugs fixed: full-text
-- queries name the 'simple' configuration the indexes use, title browses search TITLE,
-- NEW_CUSTOMER stores AGE and INCOME, the trigger's hot products are prod_id % 10000 = 0, and
-- PURCHASE locks its inventory rows so concurrent orders never lose a sale.

-- LOGIN: the customer's newest 10 purchases with the "people also bought" title; one row with
-- NULL titles when there is no history, no row when the user name and password match nobody.
CREATE FUNCTION sb_login(p_username text, p_password text)
RETURNS TABLE (customerid bigint, title text, actor text, related_title text)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_id integer;
BEGIN
    SELECT c.customerid INTO v_id
      FROM customers c
     WHERE c.username = p_username AND c.password = p_password;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
        SELECT v_id::bigint, p.title, p.actor, r.title
          FROM cust_hist h
          JOIN products p ON p.prod_id = h.prod_id
          JOIN products r ON r.prod_id = p.common_prod_id
         WHERE h.customerid = v_id
         ORDER BY h.orderid DESC, p.title
         LIMIT 10;
    IF NOT FOUND THEN
        RETURN QUERY SELECT v_id::bigint, NULL::text, NULL::text, NULL::text;
    END IF;
END
$$;

-- NEW_CUSTOMER: the new id, or NULL when the user name is taken (checked first so a taken
-- name does not use up a serial value; ON CONFLICT covers the race).
CREATE FUNCTION sb_new_customer(
    p_firstname text, p_lastname text, p_address1 text, p_address2 text, p_city text,
    p_state text, p_zip text, p_country text, p_region integer, p_email text, p_phone text,
    p_creditcardtype integer, p_creditcard text, p_creditcardexpiration text,
    p_username text, p_password text, p_age integer, p_income integer, p_gender text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id integer;
BEGIN
    IF EXISTS (SELECT 1 FROM customers c WHERE c.username = p_username) THEN
        RETURN NULL;
    END IF;
    INSERT INTO customers AS c (firstname, lastname, address1, address2, city, state, zip,
                                country, region, email, phone, creditcardtype, creditcard,
                                creditcardexpiration, username, password, age, income, gender)
    VALUES (p_firstname, p_lastname, p_address1, p_address2, p_city, p_state, p_zip,
            p_country, p_region, p_email, p_phone, p_creditcardtype, p_creditcard,
            p_creditcardexpiration, p_username, p_password, p_age, p_income, p_gender)
    ON CONFLICT (username) DO NOTHING
    RETURNING c.customerid INTO v_id;
    RETURN v_id;
END
$$;

-- NEW_MEMBER: true when the customer became a member, false when already one.
CREATE FUNCTION sb_new_member(p_customerid bigint, p_level integer)
RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO membership (customerid, membershiptype, expiredate)
    VALUES (p_customerid, p_level, current_date)
    ON CONFLICT (customerid) DO NOTHING;
    RETURN FOUND;
END
$$;

-- BROWSE_BY_CATEGORY: products on special in a category.
CREATE FUNCTION sb_browse_by_category(p_batch integer, p_category integer)
RETURNS SETOF products
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM products p
         WHERE p.category = p_category AND p.special = 1
         LIMIT p_batch;
END
$$;

-- BROWSE_BY_ACTOR / _BY_TITLE: every word of the search must occur (plainto_tsquery joins
-- them with '&' and cannot fail on odd input).
CREATE FUNCTION sb_browse_by_actor(p_batch integer, p_actor text)
RETURNS SETOF products
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM products p
         WHERE to_tsvector('simple', p.actor) @@ plainto_tsquery('simple', p_actor)
         LIMIT p_batch;
END
$$;

CREATE FUNCTION sb_browse_by_title(p_batch integer, p_title text)
RETURNS SETOF products
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT * FROM products p
         WHERE to_tsvector('simple', p.title) @@ plainto_tsquery('simple', p_title)
         LIMIT p_batch;
END
$$;

-- GET_PROD_REVIEWS_BY_ACTOR / _BY_TITLE: reviews of products whose actor (or title) holds the
-- word, at most p_depth of them (DS3.5's search_depth), ranked by summed helpfulness; reviews
-- nobody rated are left out, as DS3's inner join does.
CREATE FUNCTION sb_review_search(p_batch integer, p_word text, p_depth integer, p_by_title boolean)
RETURNS TABLE (prod_id integer, title text, actor text, review_id integer, review_date date,
               stars smallint, customerid integer, review_summary text, review_text text,
               total_helpfulness bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    -- One branch of the UNION runs: the other's guard is false before it reads a row.
    RETURN QUERY
        SELECT t.*, s.total
          FROM (SELECT p.prod_id, p.title, p.actor, r.review_id, r.review_date, r.stars,
                       r.customerid, r.review_summary, r.review_text
                  FROM (SELECT * FROM products p
                         WHERE p_by_title
                           AND to_tsvector('simple', p.title) @@ plainto_tsquery('simple', p_word)
                        UNION ALL
                        SELECT * FROM products p
                         WHERE NOT p_by_title
                           AND to_tsvector('simple', p.actor) @@ plainto_tsquery('simple', p_word)) p
                  JOIN reviews r ON r.prod_id = p.prod_id
                 LIMIT p_depth) t
         CROSS JOIN LATERAL (SELECT sum(h.helpfulness)::bigint AS total
                               FROM reviews_helpfulness h
                              WHERE h.review_id = t.review_id) s
         WHERE s.total IS NOT NULL
         ORDER BY s.total DESC
         LIMIT p_batch;
END
$$;

-- GET_PROD_REVIEWS (most helpful first), _BY_STARS (p_stars set) and _BY_DATE (p_by_date):
-- a product's reviews with their summed helpfulness.
CREATE FUNCTION sb_get_reviews(p_batch integer, p_prod_id bigint, p_stars integer, p_by_date boolean)
RETURNS TABLE (review_id integer, prod_id integer, review_date date, stars smallint,
               customerid integer, review_summary text, review_text text,
               total_helpfulness bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY
        SELECT r.review_id, r.prod_id, r.review_date, r.stars, r.customerid, r.review_summary,
               r.review_text, s.total
          FROM reviews r
         CROSS JOIN LATERAL (SELECT sum(h.helpfulness)::bigint AS total
                               FROM reviews_helpfulness h
                              WHERE h.review_id = r.review_id) s
         WHERE r.prod_id = p_prod_id
           AND (p_stars IS NULL OR r.stars = p_stars)
           AND s.total IS NOT NULL
         ORDER BY CASE WHEN p_by_date THEN r.review_date END DESC, s.total DESC
         LIMIT p_batch;
END
$$;

-- NEW_PROD_REVIEW: the new review's id.
CREATE FUNCTION sb_new_review(p_prod_id bigint, p_stars integer, p_customerid bigint,
                              p_summary text, p_text text)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id integer;
BEGIN
    INSERT INTO reviews AS r (prod_id, review_date, stars, customerid, review_summary, review_text)
    VALUES (p_prod_id, current_date, p_stars, p_customerid, p_summary, p_text)
    RETURNING r.review_id INTO v_id;
    RETURN v_id;
END
$$;

-- NEW_REVIEW_HELPFULNESS: the new rating's id.
CREATE FUNCTION sb_new_helpfulness(p_review_id bigint, p_customerid bigint, p_rating integer)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_id integer;
BEGIN
    INSERT INTO reviews_helpfulness AS h (review_id, customerid, helpfulness)
    VALUES (p_review_id, p_customerid, p_rating)
    RETURNING h.review_helpfulness_id INTO v_id;
    RETURN v_id;
END
$$;

-- PURCHASE: the new order id, or NULL (and nothing written) when an item is out of stock or
-- unknown. The inventory rows are locked in prod_id order (so two orders never deadlock on
-- them) and checked, summed per product, before anything is written; then the order, the
-- stock and sales, the lines (orderlineid 1..n in the caller's order) and the history go in.
CREATE FUNCTION sb_purchase(p_customerid bigint, p_net_cents bigint, p_tax_cents bigint,
                            p_total_cents bigint, p_prod_ids bigint[], p_quantities integer[])
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_item record;
    v_found integer := 0;
    v_order integer;
BEGIN
    FOR v_item IN
        SELECT i.quan_in_stock, w.quantity
          FROM inventory i
          JOIN (SELECT u.prod_id, sum(u.quantity) AS quantity
                  FROM unnest(p_prod_ids, p_quantities) AS u (prod_id, quantity)
                 GROUP BY u.prod_id) w ON w.prod_id = i.prod_id
         ORDER BY i.prod_id
           FOR UPDATE OF i
    LOOP
        IF v_item.quantity > v_item.quan_in_stock THEN
            RETURN NULL;
        END IF;
        v_found := v_found + 1;
    END LOOP;
    IF v_found < (SELECT count(DISTINCT u.p) FROM unnest(p_prod_ids) AS u (p)) THEN
        RETURN NULL;
    END IF;

    INSERT INTO orders AS o (orderdate, customerid, netamount, tax, totalamount)
    VALUES (current_date, p_customerid, round(p_net_cents / 100.0, 2), round(p_tax_cents / 100.0, 2),
            round(p_total_cents / 100.0, 2))
    RETURNING o.orderid INTO v_order;

    UPDATE inventory i
       SET quan_in_stock = i.quan_in_stock - w.quantity, sales = i.sales + w.quantity
      FROM (SELECT u.prod_id, sum(u.quantity) AS quantity
              FROM unnest(p_prod_ids, p_quantities) AS u (prod_id, quantity)
             GROUP BY u.prod_id) w
     WHERE i.prod_id = w.prod_id;

    INSERT INTO orderlines (orderlineid, orderid, prod_id, quantity, orderdate)
    SELECT u.n, v_order, u.prod_id, u.quantity, current_date
      FROM unnest(p_prod_ids, p_quantities) WITH ORDINALITY AS u (prod_id, quantity, n);

    INSERT INTO cust_hist (customerid, orderid, prod_id)
    SELECT p_customerid, v_order, u.prod_id
      FROM unnest(p_prod_ids) AS u (prod_id);

    RETURN v_order;
END
$$;

-- Restock: an update that leaves fewer than 3 in stock records a reorder and refills the
-- product to 250, or 2500 for the hot products (prod_id % 10000 = 0, as the driver and the
-- generator define them). QUAN_LOW is the stock that triggered it, QUAN_REORDERED the refill.
CREATE FUNCTION sb_restock()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_target integer := CASE WHEN NEW.prod_id % 10000 = 0 THEN 2500 ELSE 250 END;
BEGIN
    INSERT INTO reorder (prod_id, date_low, quan_low, date_reordered, quan_reordered)
    VALUES (NEW.prod_id, current_date, NEW.quan_in_stock, current_date,
            v_target - NEW.quan_in_stock);
    NEW.quan_in_stock := v_target;
    RETURN NEW;
END
$$;

CREATE TRIGGER restock
    BEFORE UPDATE OF quan_in_stock ON inventory
    FOR EACH ROW
    WHEN (NEW.quan_in_stock < 3)
    EXECUTE FUNCTION sb_restock();
